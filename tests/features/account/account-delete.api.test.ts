import { eq, like } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { account, session, user, verification } from '../../../server/db/schema.js'
import { firstRow } from '../../../server/db/storage.js'
import { signUp, ERRORS, statusAndBody } from '../../helpers/http.js'
import { anonymous, follow, linkIn, type MailServer, startMailServer, withMail } from '../../helpers/mail-flow.js'

const SUBJECT = /^Confirm the deletion of your/

let m: MailServer
beforeAll(async () => {
  m = await startMailServer()
  await m.server.gatehouse.config.update({ user: { deleteUser: { enabled: true } } })
})
afterAll(() => m.close())

const db = () => m.server.gatehouse.ctx.db
const gone = async (id: string) => ({
  user: await firstRow(db().select().from(user).where(eq(user.id, id))),
  sessions: await db().select().from(session).where(eq(session.userId, id)),
  accounts: await db().select().from(account).where(eq(account.userId, id)),
})
const expectDeleted = async (id: string) => expect(await gone(id)).toEqual({ user: undefined, sessions: [], accounts: [] })
const cleared = (cookies: string[]) =>
  ['session_token', 'session_data', 'dont_remember'].every((n) =>
    cookies.some((c) => c.startsWith(`better-auth.${n}=;`) && c.includes('Max-Age=0')),
  )

const withMailFlow = async (fn: () => Promise<void>) => {
  await m.server.gatehouse.config.update({ user: { deleteUser: { sendDeleteAccountVerification: true } } })
  try {
    await fn()
  } finally {
    await m.server.gatehouse.config.update({ user: { deleteUser: { sendDeleteAccountVerification: false } } })
  }
}

describe('POST /delete-user directly', () => {
  it('with the password: removes sessions, accounts and the user and clears the cookies', async () => {
    const signed = await signUp(m.server.base)
    const res = await signed.client.post('/delete-user', { password: signed.password })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, message: 'User deleted' })
    expect(cleared(res.cookies)).toBe(true)
    await expectDeleted(signed.user.id)
    expect((await signed.client.get('/get-session')).body).toBeNull()
  })

  it('with a fresh session and no password; a stale session is refused with SESSION_EXPIRED', async () => {
    const fresh = await signUp(m.server.base)
    expect((await fresh.client.post('/delete-user', {})).body).toEqual({ success: true, message: 'User deleted' })
    await expectDeleted(fresh.user.id)

    const stale = await signUp(m.server.base)
    m.server.clock.advanceSeconds(86400)
    const refused = await stale.client.post('/delete-user', {})
    expect(refused.status).toBe(400)
    expect(refused.body).toEqual({ code: 'SESSION_EXPIRED', message: 'Session expired. Re-authenticate to perform this action.' })
    expect((await gone(stale.user.id)).user).toMatchObject({ id: stale.user.id })
    // The password still works on a stale session.
    expect((await stale.client.post('/delete-user', { password: stale.password })).body).toEqual({ success: true, message: 'User deleted' })
  })

  it('refuses a wrong password, a password for a user without one, no session, and answers 404 when disabled', async () => {
    const signed = await signUp(m.server.base)
    const wrong = await signed.client.post('/delete-user', { password: 'not my password' })
    expect(wrong.status).toBe(400)
    expect(wrong.body).toEqual({ code: 'INVALID_PASSWORD', message: 'Invalid password' })
    await db().delete(account).where(eq(account.userId, signed.user.id))
    const noCredential = await signed.client.post('/delete-user', { password: 'whatever123' })
    expect(noCredential.status).toBe(400)
    expect(noCredential.body).toEqual({ code: 'CREDENTIAL_ACCOUNT_NOT_FOUND', message: 'Credential account not found' })
    expect(statusAndBody(await anonymous(m.server).post('/delete-user', {}))).toEqual([401, ERRORS.UNAUTHORIZED])

    await m.server.gatehouse.config.update({ user: { deleteUser: { enabled: false } } })
    try {
      const disabled = await signed.client.post('/delete-user', {})
      expect(disabled.status).toBe(404)
      expect(disabled.body).toEqual({ code: 'NOT_FOUND', message: 'Not Found' })
      expect(statusAndBody(await signed.client.get('/delete-user/callback?token=x'))).toEqual([404, ERRORS.NOT_FOUND])
    } finally {
      await m.server.gatehouse.config.update({ user: { deleteUser: { enabled: true } } })
    }
    expect((await gone(signed.user.id)).user).toMatchObject({ id: signed.user.id })
  })
})

describe('deletion through the mailed link', () => {
  it('mails a 32-char [0-9a-z] token link; opening it signed in deletes the user and redirects', async () => {
    await withMailFlow(async () => {
      const signed = await signUp(m.server.base)
      const { result, mail } = await withMail(m, signed.email, SUBJECT, () =>
        signed.client.post('/delete-user', { password: signed.password, callbackURL: '/goodbye' }),
      )
      expect(result.body).toEqual({ success: true, message: 'Verification email sent' })
      expect(result.cookies).toEqual([])
      const link = linkIn(mail, `${m.server.base}/delete-user/callback?token=`)
      const token = new URL(link).searchParams.get('token') as string
      expect(token).toMatch(/^[0-9a-z]{32}$/)
      expect(new URL(link).searchParams.get('callbackURL')).toBe('/goodbye')
      const row = await firstRow(
        db()
          .select()
          .from(verification)
          .where(eq(verification.identifier, `delete-account-${token}`)),
      )
      expect(row).toMatchObject({ value: signed.user.id })
      expect(row?.expiresAt.getTime()).toBe(m.server.clock.now() + 86400_000)
      expect((await gone(signed.user.id)).user).toMatchObject({ id: signed.user.id })

      // Not signed in: refused, nothing consumed.
      const stranger = await follow(anonymous(m.server), link)
      expect(stranger.status).toBe(404)
      expect(stranger.body).toEqual({ code: 'FAILED_TO_GET_USER_INFO', message: 'Failed to get user info' })

      const res = await follow(signed.client, link)
      expect(res.status).toBe(302)
      expect(res.headers.get('location')).toBe('/goodbye')
      expect(cleared(res.cookies)).toBe(true)
      await expectDeleted(signed.user.id)
      expect(
        await firstRow(
          db()
            .select()
            .from(verification)
            .where(eq(verification.identifier, `delete-account-${token}`)),
        ),
      ).toBeUndefined()
    })
  })

  it('a user with a password must give it; the token also works in the POST body; tokens are single-use and per user', async () => {
    await withMailFlow(async () => {
      const signed = await signUp(m.server.base)
      const noPassword = await signed.client.post('/delete-user', {})
      expect(noPassword.status).toBe(400)
      expect(noPassword.body).toEqual({
        code: 'USER_ALREADY_HAS_PASSWORD',
        message: 'User already has a password. Provide that to delete the account.',
      })
      const { mail } = await withMail(m, signed.email, SUBJECT, () => signed.client.post('/delete-user', { password: signed.password }))
      const token = new URL(linkIn(mail, `${m.server.base}/delete-user/callback`)).searchParams.get('token') as string

      const other = await signUp(m.server.base)
      const foreign = await other.client.post('/delete-user', { token })
      expect(foreign.status).toBe(404)
      expect(foreign.body).toEqual({ code: 'INVALID_TOKEN', message: 'invalid token' })
      expect((await gone(other.user.id)).user).toMatchObject({ id: other.user.id })

      const ok = await signed.client.post('/delete-user', { token })
      expect(ok.body).toEqual({ success: true, message: 'User deleted' })
      await expectDeleted(signed.user.id)

      const third = await signUp(m.server.base)
      const { mail: thirdMail } = await withMail(m, third.email, SUBJECT, () =>
        third.client.post('/delete-user', { password: third.password }),
      )
      const link = linkIn(thirdMail, `${m.server.base}/delete-user/callback`)
      const plain = await follow(third.client, link.replace(/&callbackURL=.*$/, ''))
      expect(plain.status).toBe(200)
      expect(plain.body).toEqual({ success: true, message: 'User deleted' })
      const replay = await follow(third.client, link)
      expect(replay.status).toBe(404)
      // The user and its session are gone, so the replay is refused before the token is looked up;
      // that the token row itself is consumed is checked in the test above.
      expect(replay.body).toEqual({ code: 'FAILED_TO_GET_USER_INFO', message: 'Failed to get user info' })
    })
  })

  it('an expired token is refused and expired records are cleaned up when found', async () => {
    await withMailFlow(async () => {
      const signed = await signUp(m.server.base)
      const { mail } = await withMail(m, signed.email, SUBJECT, () => signed.client.post('/delete-user', { password: signed.password }))
      const link = linkIn(mail, `${m.server.base}/delete-user/callback`)
      m.server.clock.advanceSeconds(86400)
      const res = await follow(signed.client, link)
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ code: 'INVALID_TOKEN', message: 'invalid token' })
      expect((await gone(signed.user.id)).user).toMatchObject({ id: signed.user.id })
      const expired = (await db().select().from(verification).where(like(verification.identifier, 'delete-account-%'))).filter(
        (v) => v.expiresAt.getTime() <= m.server.clock.now(),
      )
      expect(expired).toEqual([])
    })
  })

  it('refuses an untrusted callbackURL on the callback and on the request', async () => {
    const signed = await signUp(m.server.base)
    const cb = await signed.client.get('/delete-user/callback?token=abc&callbackURL=https://evil.example/')
    expect(cb.status).toBe(403)
    expect(cb.body).toEqual({ code: 'INVALID_CALLBACK_URL', message: 'Invalid callbackURL' })
    const post = await signed.client.post('/delete-user', { callbackURL: 'https://evil.example/' })
    expect(post.status).toBe(403)
    expect(post.body).toEqual({ code: 'INVALID_CALLBACK_URL', message: 'Invalid callbackURL' })
    expect((await gone(signed.user.id)).user).toMatchObject({ id: signed.user.id })
  })
})
