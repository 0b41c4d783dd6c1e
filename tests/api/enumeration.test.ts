import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { user } from '../../server/db/schema.js'
import { HttpClient, uniqueEmail } from '../helpers/http.js'
import { type MailServer, startMailServer } from '../helpers/mail-flow.js'

let env: MailServer
beforeAll(async () => {
  env = await startMailServer({ emailAndPassword: { requireEmailVerification: true } })
})
afterAll(() => env.close())

type SignUpAnswer = { token: string | null; user: Record<string, unknown> }

describe('sign-up does not reveal registered addresses when verification is required', () => {
  it('answers a duplicate sign-up exactly like a new one and mails the owner instead', async () => {
    const email = uniqueEmail('owner')
    const first = await new HttpClient(env.server.base).post<SignUpAnswer>('/sign-up/email', {
      name: 'Owner',
      email,
      password: 'password1234',
    })
    expect(first.status).toBe(200)
    await env.sink.waitFor(email, (m) => m.subject.toLowerCase().includes('verify'))

    const again = await new HttpClient(env.server.base).post<SignUpAnswer>('/sign-up/email', {
      name: 'Intruder',
      email,
      password: 'other-password',
    })
    expect(again.status).toBe(200)
    expect(again.cookies).toEqual([])
    expect(again.body.token).toBeNull()
    expect(Object.keys(again.body.user).sort()).toEqual(Object.keys(first.body.user).sort())
    expect(again.body.user).toMatchObject({ email, name: 'Intruder', emailVerified: false })
    expect(again.body.user.id).not.toBe(first.body.user.id)

    const notice = await env.sink.waitFor(email, (m) => m.subject.startsWith('Someone tried to sign up'))
    expect(notice.text).toContain('already has one')

    // The real account is untouched.
    const rows = await env.server.gatehouse.ctx.db.select({ name: user.name }).from(user).where(eq(user.email, email))
    expect(rows).toEqual([{ name: 'Owner' }])
  })
})
