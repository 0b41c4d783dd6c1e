import { createServer, type Socket } from 'node:net'
import { and, eq, like } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { setPassword } from '../../../server/features/account/rules.js'
import { account, verification } from '../../../server/db/schema.js'
import { firstRow } from '../../../server/db/storage.js'
import { listMailOutbox } from '../../../server/mail/index.js'
import { HttpClient, signUp, uniqueEmail, ERRORS, statusAndBody } from '../../helpers/http.js'
import { serverLog, startTestServer } from '../../helpers/server.js'
import { anonymous, follow, linkIn, type MailServer, settle, startMailServer, withMail } from '../../helpers/mail-flow.js'

const SUBJECT = /^Reset your .* password$/
const MESSAGE = 'If this email exists in our system, check your email for the reset link'

let m: MailServer
beforeAll(async () => {
  m = await startMailServer()
})
afterAll(() => m.close())

const db = () => m.server.gatehouse.ctx.db

async function resetLink(email: string, redirectTo = `${m.server.origin}/reset`): Promise<string> {
  const { result, mail } = await withMail(m, email, SUBJECT, () =>
    anonymous(m.server).post('/request-password-reset', { email, redirectTo }),
  )
  expect(result.status).toBe(200)
  return linkIn(mail, `${m.server.base}/reset-password/`)
}

const tokenOf = (link: string) => new URL(link).pathname.split('/').pop() as string

describe('password reset by mail', () => {
  it('request → mail → GET link redirects with the token → POST sets the password → sign-in with it', async () => {
    const { email } = await signUp(m.server.base)
    const link = await resetLink(email.toUpperCase())
    const token = tokenOf(link)
    expect(token).toMatch(/^[A-Za-z0-9]{24}$/)
    expect(new URL(link).searchParams.get('callbackURL')).toBe(`${m.server.origin}/reset`)
    const row = await firstRow(
      db()
        .select()
        .from(verification)
        .where(eq(verification.identifier, `reset-password:${token}`)),
    )
    expect(row?.expiresAt.getTime()).toBe(m.server.clock.now() + 3600_000)

    const browser = anonymous(m.server)
    const landing = await follow(browser, link)
    expect(landing.status).toBe(302)
    expect(landing.headers.get('location')).toBe(`${m.server.origin}/reset?token=${token}`)

    const reset = await browser.post('/reset-password', { newPassword: 'brand new password', token })
    expect(reset.status).toBe(200)
    expect(reset.body).toEqual({ status: true })
    expect(
      await firstRow(
        db()
          .select()
          .from(verification)
          .where(eq(verification.identifier, `reset-password:${token}`)),
      ),
    ).toBeUndefined()

    expect(statusAndBody(await anonymous(m.server).post('/sign-in/email', { email, password: 'correct horse battery' }))).toEqual([
      401,
      ERRORS.INVALID_EMAIL_OR_PASSWORD,
    ])
    expect((await anonymous(m.server).post('/sign-in/email', { email, password: 'brand new password' })).status).toBe(200)

    // The token is single-use.
    const reuse = await browser.post('/reset-password', { newPassword: 'another password', token })
    expect(reuse.status).toBe(400)
    expect(reuse.body).toEqual({ code: 'INVALID_TOKEN', message: 'invalid token' })
    const relanding = await follow(browser, link)
    expect(relanding.headers.get('location')).toBe(`${m.server.origin}/reset?error=INVALID_TOKEN`)
  })

  it('answers known and unknown addresses alike, and the alias /forget-password works', async () => {
    const { email } = await signUp(m.server.base)
    const client = anonymous(m.server)
    const known = await client.post('/request-password-reset', { email })
    const unknown = await client.post('/request-password-reset', { email: uniqueEmail('nobody') })
    expect(known.status).toBe(200)
    expect(unknown.status).toBe(200)
    expect(known.body).toEqual({ status: true, message: MESSAGE })
    expect(unknown.body).toEqual(known.body)
    const { result, mail } = await withMail(m, email, SUBJECT, () => client.post('/forget-password', { email }))
    expect(result.body).toEqual({ status: true, message: MESSAGE })
    // No redirectTo: the link carries an empty callbackURL, like better-auth.
    expect(linkIn(mail, `${m.server.base}/reset-password/`)).toMatch(/\?callbackURL=$/)
  })

  it('takes the token from the query too, and keeps sessions unless revokeSessionsOnPasswordReset', async () => {
    const signed = await signUp(m.server.base)
    const token = tokenOf(await resetLink(signed.email))
    const res = await anonymous(m.server).post(`/reset-password?token=${token}`, { newPassword: 'query token password' })
    expect(res.body).toEqual({ status: true })
    expect((await signed.client.get('/get-session')).body).toMatchObject({ session: { token: signed.token } })

    await m.server.gatehouse.config.update({ emailAndPassword: { revokeSessionsOnPasswordReset: true } })
    try {
      const token2 = tokenOf(await resetLink(signed.email))
      expect((await anonymous(m.server).post('/reset-password', { newPassword: 'revoking password', token: token2 })).status).toBe(200)
      expect((await signed.client.get('/get-session')).body).toBeNull()
    } finally {
      await m.server.gatehouse.config.update({ emailAndPassword: { revokeSessionsOnPasswordReset: false } })
    }
  })

  it('creates a credential account when the user has none', async () => {
    const { email, user } = await signUp(m.server.base)
    await db().delete(account).where(eq(account.userId, user.id))
    const token = tokenOf(await resetLink(email))
    expect((await anonymous(m.server).post('/reset-password', { newPassword: 'first password ever', token })).status).toBe(200)
    const rows = await db().select().from(account).where(eq(account.userId, user.id))
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ providerId: 'credential', accountId: user.id })
    expect((await anonymous(m.server).post('/sign-in/email', { email, password: 'first password ever' })).status).toBe(200)
  })

  it('refuses an expired token (and cleans the record up), a short or long password and a missing token', async () => {
    const { email } = await signUp(m.server.base)
    const link = await resetLink(email)
    const token = tokenOf(link)
    const client = anonymous(m.server)
    const short = await client.post('/reset-password', { newPassword: 'short', token })
    expect(short.status).toBe(400)
    expect(short.body).toEqual({ code: 'PASSWORD_TOO_SHORT', message: 'Password too short' })
    const long = await client.post('/reset-password', { newPassword: 'x'.repeat(129), token })
    expect(long.body).toEqual({ code: 'PASSWORD_TOO_LONG', message: 'Password too long' })
    const missing = await client.post('/reset-password', { newPassword: 'long enough password' })
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({ code: 'INVALID_TOKEN', message: 'invalid token' })

    m.server.clock.advanceSeconds(3600)
    const landing = await follow(client, link)
    expect(landing.headers.get('location')).toBe(`${m.server.origin}/reset?error=INVALID_TOKEN`)
    const expired = await client.post('/reset-password', { newPassword: 'long enough password', token })
    expect(expired.status).toBe(400)
    expect(expired.body).toEqual({ code: 'INVALID_TOKEN', message: 'invalid token' })
    // Expired records are removed when found.
    expect(
      await firstRow(
        db()
          .select()
          .from(verification)
          .where(eq(verification.identifier, `reset-password:${token}`)),
      ),
    ).toBeUndefined()
  })

  it('keeps expired records when verification.disableCleanup is set (they are still refused)', async () => {
    await m.server.gatehouse.config.update({ verification: { disableCleanup: true } })
    try {
      const { email, user } = await signUp(m.server.base)
      const token = tokenOf(await resetLink(email))
      m.server.clock.advanceSeconds(3601)
      const expired = await anonymous(m.server).post('/reset-password', { newPassword: 'long enough password', token })
      expect(expired.body).toEqual({ code: 'INVALID_TOKEN', message: 'invalid token' })
      expect(
        await firstRow(
          db()
            .select()
            .from(verification)
            .where(eq(verification.identifier, `reset-password:${token}`)),
        ),
      ).toMatchObject({ value: user.id })
    } finally {
      await m.server.gatehouse.config.update({ verification: { disableCleanup: false } })
    }
  })

  it('refuses an untrusted redirectTo / callbackURL, an invalid email, and answers 400 when reset is switched off', async () => {
    const { email } = await signUp(m.server.base)
    const client = anonymous(m.server)
    const evil = await client.post('/request-password-reset', { email, redirectTo: 'https://evil.example/reset' })
    expect(evil.status).toBe(403)
    expect(evil.body).toEqual({ code: 'INVALID_REDIRECT_URL', message: 'Invalid redirectURL' })
    const evilLanding = await client.get('/reset-password/abc?callbackURL=https://evil.example/')
    expect(evilLanding.status).toBe(403)
    expect(evilLanding.body).toEqual({ code: 'INVALID_CALLBACK_URL', message: 'Invalid callbackURL' })
    const noCallback = await client.get('/reset-password/abc')
    expect(noCallback.headers.get('location')).toBe(`${m.server.base}/error?error=INVALID_TOKEN`)
    const invalid = await client.post<{ code: string }>('/request-password-reset', { email: 'nope' })
    expect(invalid.status).toBe(400)
    expect(invalid.body.code).toBe('VALIDATION_ERROR')

    await m.server.gatehouse.config.update({ emailAndPassword: { sendResetPassword: false } })
    try {
      const off = await client.post('/request-password-reset', { email })
      expect(off.status).toBe(400)
      expect(off.body).toEqual({ code: 'RESET_PASSWORD_DISABLED', message: "Reset password isn't enabled" })
    } finally {
      await m.server.gatehouse.config.update({ emailAndPassword: { sendResetPassword: true } })
    }
  })

  it('answers at once even when the SMTP server never answers (delivery is in the background)', async () => {
    const sockets: Socket[] = []
    const blackHole = createServer((s) => sockets.push(s))
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve))
    const address = blackHole.address()
    const port = typeof address === 'object' && address ? address.port : 0
    const server = await startTestServer({ config: { mail: { smtp: { url: `smtp://127.0.0.1:${port}` } } } })
    try {
      const { email } = await signUp(server.base)
      // Order, not speed: the answer is complete while the SMTP conversation has not even had
      // its greeting (the server never sends one), so the endpoint cannot have waited for it.
      const res = await new HttpClient(server.base).post('/request-password-reset', { email })
      expect([res.status, res.body]).toEqual([
        200,
        { status: true, message: 'If this email exists in our system, check your email for the reset link' },
      ])
      await vi.waitFor(() => expect(sockets.length).toBeGreaterThan(0), { timeout: 5_000 })
      const rows = (await listMailOutbox(server.gatehouse.ctx, { to: email })).messages
      // Claimed by this process for delivery (queued → sending), not sent: the SMTP server is silent.
      expect(rows.map((r) => [r.kind, r.status, r.sentAt])).toEqual([['password-reset', 'sending', null]])
      // Cutting the silent SMTP server off below fails the delivery: expected here.
      serverLog.allowWarning(/\(password-reset\) to .* failed via smtp:/)
    } finally {
      for (const s of sockets) s.destroy()
      await server.close()
      blackHole.close()
    }
  })
})

describe('POST /change-password', () => {
  it('changes the password, checks the current one and keeps other sessions by default', async () => {
    const signed = await signUp(m.server.base)
    const other = new HttpClient(m.server.base)
    await other.post('/sign-in/email', { email: signed.email, password: signed.password })
    const res = await signed.client.post<{ token: null; user: { id: string; email: string } }>('/change-password', {
      currentPassword: signed.password,
      newPassword: 'a different password',
    })
    expect(res.status).toBe(200)
    expect(res.body.token).toBeNull()
    expect(res.body.user).toMatchObject({ id: signed.user.id, email: signed.email })
    expect((await other.get('/get-session')).body).toMatchObject({ user: { id: signed.user.id } })
    expect((await anonymous(m.server).post('/sign-in/email', { email: signed.email, password: 'a different password' })).status).toBe(200)
  })

  it('revokeOtherSessions deletes every session and issues a new one', async () => {
    const signed = await signUp(m.server.base)
    const other = new HttpClient(m.server.base)
    await other.post('/sign-in/email', { email: signed.email, password: signed.password })
    const res = await signed.client.post<{ token: string }>('/change-password', {
      currentPassword: signed.password,
      newPassword: 'a different password',
      revokeOtherSessions: true,
    })
    expect(res.status).toBe(200)
    expect(res.body.token).toMatch(/^[A-Za-z0-9]{32}$/)
    expect(res.body.token).not.toBe(signed.token)
    expect(res.cookies.find((c) => c.startsWith('better-auth.session_token='))).toContain(res.body.token)
    expect((await other.get('/get-session')).body).toBeNull()
    const mine = await signed.client.get<{ session: { token: string } }>('/get-session')
    expect(mine.body.session.token).toBe(res.body.token)
    const sessions = await signed.client.get<unknown[]>('/list-sessions')
    expect(sessions.body).toHaveLength(1)
  })

  it('refuses a wrong current password, a short/long new one, a user without password, and no session', async () => {
    const signed = await signUp(m.server.base)
    const wrong = await signed.client.post('/change-password', { currentPassword: 'not it at all', newPassword: 'a different password' })
    expect(wrong.status).toBe(400)
    expect(wrong.body).toEqual({ code: 'INVALID_PASSWORD', message: 'Invalid password' })
    const short = await signed.client.post('/change-password', { currentPassword: signed.password, newPassword: 'short' })
    expect(short.body).toEqual({ code: 'PASSWORD_TOO_SHORT', message: 'Password too short' })
    const long = await signed.client.post('/change-password', { currentPassword: signed.password, newPassword: 'y'.repeat(129) })
    expect(long.body).toEqual({ code: 'PASSWORD_TOO_LONG', message: 'Password too long' })
    await db()
      .delete(account)
      .where(and(eq(account.userId, signed.user.id), eq(account.providerId, 'credential')))
    const none = await signed.client.post('/change-password', { currentPassword: signed.password, newPassword: 'a different password' })
    expect(none.status).toBe(400)
    expect(none.body).toEqual({ code: 'CREDENTIAL_ACCOUNT_NOT_FOUND', message: 'Credential account not found' })
    const anon = await anonymous(m.server).post('/change-password', { currentPassword: 'whatever1', newPassword: 'whatever2' })
    expect(statusAndBody(anon)).toEqual([401, ERRORS.UNAUTHORIZED])
  })
})

describe('set-password (server only)', () => {
  it('is not routed over HTTP', async () => {
    const signed = await signUp(m.server.base)
    const res = await signed.client.post('/set-password', { newPassword: 'some new password' })
    expect(statusAndBody(res)).toEqual([404, ERRORS.NOT_FOUND])
  })

  it('sets a first password for a user without one and refuses a user who has one', async () => {
    const signed = await signUp(m.server.base)
    const ctx = m.server.gatehouse.ctx
    await expect(setPassword(ctx, signed.user.id, 'another password')).rejects.toMatchObject({
      status: 400,
      code: 'PASSWORD_ALREADY_SET',
      message: 'User already has a password set',
    })
    await expect(setPassword(ctx, signed.user.id, 'short')).rejects.toMatchObject({ code: 'PASSWORD_TOO_SHORT' })
    await db().delete(account).where(eq(account.userId, signed.user.id))
    await setPassword(ctx, signed.user.id, 'panel chosen password')
    expect((await anonymous(m.server).post('/sign-in/email', { email: signed.email, password: 'panel chosen password' })).status).toBe(200)
    await expect(setPassword(ctx, 'no-such-user', 'panel chosen password')).rejects.toMatchObject({ status: 404, code: 'USER_NOT_FOUND' })
  })
})

/**
 * Not an assertion but a measurement for the issue note (GATEHOUSE_MEASURE=1): request-password-reset
 * response times for known and unknown addresses, interleaved, N each.
 */
describe.runIf(process.env.GATEHOUSE_MEASURE === '1')('reset-request timing (measurement)', () => {
  it('prints median and p95 for known vs unknown addresses', async () => {
    const n = Number(process.env.GATEHOUSE_MEASURE_N ?? 50)
    const { email } = await signUp(m.server.base)
    const client = anonymous(m.server)
    const known: number[] = []
    const unknown: number[] = []
    for (let i = 0; i < 5; i++) await client.post('/request-password-reset', { email: uniqueEmail('warm') })
    for (let i = 0; i < n; i++) {
      for (const [target, list] of [
        [email, known],
        [uniqueEmail('ghost'), unknown],
      ] as const) {
        const t = performance.now()
        const res = await client.post('/request-password-reset', { email: target })
        list.push(performance.now() - t)
        expect(res.status).toBe(200)
        await settle(m)
      }
    }
    const stats = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b)
      const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number
      return `median ${at(0.5).toFixed(2)} ms, p95 ${at(0.95).toFixed(2)} ms, max ${at(1).toFixed(2)} ms`
    }
    console.log(`request-password-reset, ${n} each:\n  known   ${stats(known)}\n  unknown ${stats(unknown)}`)
    const sent = await db().select().from(verification).where(like(verification.identifier, 'reset-password:%'))
    expect(sent.length).toBeGreaterThanOrEqual(n)
  })
})
