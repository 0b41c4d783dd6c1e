import { eq } from 'drizzle-orm'
import { jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { account, user } from '../../../server/db/schema.js'
import { firstRow } from '../../../server/db/storage.js'
import { HttpClient, signUp, uniqueEmail, ERRORS, statusAndBody } from '../../helpers/http.js'
import { TEST_SECRET } from '../../helpers/signatures.js'
import { anonymous, follow, linkIn, type MailServer, mailsTo, settle, startMailServer, withMail } from '../../helpers/mail-flow.js'

const VERIFY = /^Verify your email address/
const CONFIRM = /^Confirm your new email address/

let m: MailServer
/** The link's JWT, verified with jose and the test secret (HS256) at the server's clock. */
const verifiedClaims = async (token: string) =>
  (await jwtVerify(token, new TextEncoder().encode(TEST_SECRET), { algorithms: ['HS256'], currentDate: new Date(m.server.clock.now()) }))
    .payload
beforeAll(async () => {
  m = await startMailServer()
  await m.server.gatehouse.config.update({
    user: { changeEmail: { enabled: true }, additionalFields: { nickname: { type: 'string' }, plan: { type: 'string', input: false } } },
    session: { cookieCache: { enabled: true } },
  })
})
afterAll(() => m.close())

const db = () => m.server.gatehouse.ctx.db
const userRow = async (id: string) => await firstRow(db().select().from(user).where(eq(user.id, id)))

interface SessionAnswer {
  user: Record<string, unknown>
}

describe('POST /update-user', () => {
  it('updates name, image and additional fields, and re-issues the cookie cache', async () => {
    const signed = await signUp(m.server.base)
    await signed.client.get('/get-session') // fills the cookie cache
    const res = await signed.client.post('/update-user', { name: 'Renamed', image: 'https://img.example/a.png', nickname: 'nick' })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: true })
    expect(res.cookies.some((c) => c.startsWith('better-auth.session_data='))).toBe(true)
    const cached = await signed.client.get<SessionAnswer>('/get-session')
    expect(cached.body.user).toMatchObject({ name: 'Renamed', image: 'https://img.example/a.png', nickname: 'nick' })
    const fresh = await signed.client.get<SessionAnswer>('/get-session?disableCookieCache=true')
    expect(fresh.body.user).toMatchObject({ name: 'Renamed', nickname: 'nick' })

    const unset = await signed.client.post('/update-user', { image: null })
    expect(unset.body).toEqual({ status: true })
    expect((await userRow(signed.user.id))?.image).toBeNull()
    expect((await userRow(signed.user.id))?.additionalFields).toEqual({ nickname: 'nick' })
  })

  it('refuses a body with nothing to update without writing, and refuses email, input:false fields and bad types', async () => {
    const signed = await signUp(m.server.base)
    const before = await userRow(signed.user.id)
    m.server.clock.advanceSeconds(1)
    // better-auth 1.7: unknown keys alone are "No fields to update".
    const empty = await signed.client.post('/update-user', { id: 'x' })
    expect(empty.status).toBe(400)
    expect(empty.body).toEqual({ code: 'NO_FIELDS_TO_UPDATE', message: 'No fields to update' })
    expect(await userRow(signed.user.id)).toEqual(before)

    const email = await signed.client.post('/update-user', { email: uniqueEmail() })
    expect(email.status).toBe(400)
    expect(email.body).toEqual({ code: 'EMAIL_CAN_NOT_BE_UPDATED', message: 'Email can not be updated' })
    const plan = await signed.client.post('/update-user', { plan: 'gold' })
    expect(plan.status).toBe(400)
    expect(plan.body).toEqual({ code: 'FIELD_NOT_ALLOWED', message: 'plan is not allowed to be set' })
    const role = await signed.client.post('/update-user', { role: 'admin' })
    expect(role.body).toEqual({ code: 'FIELD_NOT_ALLOWED', message: 'role is not allowed to be set' })
    const badName = await signed.client.post<{ code: string }>('/update-user', { name: 42 })
    expect(badName.status).toBe(400)
    expect(badName.body).toEqual({ code: 'VALIDATION_ERROR', message: '[body.name] expected a string' })
    const notObject = await signed.client.request<{ code: string }>('POST', '/update-user', {
      raw: '[1,2]',
      headers: { 'content-type': 'application/json' },
    })
    expect(statusAndBody(notObject)).toEqual([
      400,
      { code: 'VALIDATION_ERROR', message: '[body] Invalid input: expected record, received array' },
    ])
    expect(await userRow(signed.user.id)).toEqual(before)

    expect(statusAndBody(await anonymous(m.server).post('/update-user', { name: 'x' }))).toEqual([401, ERRORS.UNAUTHORIZED])
  })
})

describe('POST /change-email', () => {
  it('unverified address, by default: unchanged until the link mailed to the new address is followed (better-auth 1.7)', async () => {
    const signed = await signUp(m.server.base)
    const newEmail = uniqueEmail('pending')
    const { result, mail } = await withMail(m, newEmail, VERIFY, () =>
      signed.client.post('/change-email', { newEmail: newEmail.toUpperCase(), callbackURL: '/settings' }),
    )
    expect(result.status).toBe(200)
    expect(result.body).toEqual({ status: true })
    expect(result.cookies).toEqual([])
    // The session alone moved nothing: a stolen session cannot take the account to another mailbox.
    expect(await userRow(signed.user.id)).toMatchObject({ email: signed.email, emailVerified: false })
    expect((await signed.client.get<SessionAnswer>('/get-session?disableCookieCache=true')).body.user.email).toBe(signed.email)
    expect(mail.to).toEqual([newEmail])
    const link = linkIn(mail, `${m.server.base}/verify-email`)
    expect(await verifiedClaims(new URL(link).searchParams.get('token') as string)).toMatchObject({
      email: signed.email,
      updateTo: newEmail,
      userId: signed.user.id,
      requestType: 'change-email-verification',
    })

    // Another user's session cannot apply it.
    const other = await signUp(m.server.base)
    expect((await follow(other.client, link)).headers.get('location')).toBe('/settings?error=invalid_user')
    expect((await userRow(signed.user.id))?.email).toBe(signed.email)

    // Followed from the new mailbox (no session needed): the address changes, still unverified (as better-auth).
    const changed = await follow<{ status: boolean; user: { email: string; emailVerified: boolean } }>(
      anonymous(m.server),
      link.replace(/&callbackURL=.*$/, ''),
    )
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({ status: true, user: { email: newEmail, emailVerified: false } })
    expect(await userRow(signed.user.id)).toMatchObject({ email: newEmail, emailVerified: false })
    expect((await signed.client.get<SessionAnswer>('/get-session?disableCookieCache=true')).body.user.email).toBe(newEmail)
    // Not twice: the account is no longer at the token's address.
    expect((await follow(anonymous(m.server), link)).headers.get('location')).toBe('/settings?error=invalid_token')
    expect((await anonymous(m.server).post('/sign-in/email', { email: newEmail, password: signed.password })).status).toBe(200)
  })

  it('a taken new address answers {status: true} and changes nothing, on either path', async () => {
    const signed = await signUp(m.server.base)
    const other = await signUp(m.server.base)
    const taken = await signed.client.post('/change-email', { newEmail: other.email })
    expect([taken.status, taken.body]).toEqual([200, { status: true }])
    await m.server.gatehouse.config.update({ user: { changeEmail: { updateEmailWithoutVerification: true } } })
    try {
      const atOnce = await signed.client.post('/change-email', { newEmail: other.email })
      expect([atOnce.status, atOnce.body]).toEqual([200, { status: true }])
    } finally {
      await m.server.gatehouse.config.update({ user: { changeEmail: { updateEmailWithoutVerification: null } } })
    }
    await db().update(user).set({ emailVerified: true }).where(eq(user.id, signed.user.id))
    const verified = await signed.client.post('/change-email', { newEmail: other.email })
    expect([verified.status, verified.body]).toEqual([200, { status: true }])
    await settle(m)
    expect(mailsTo(m.sink, other.email, VERIFY)).toEqual([])
    expect(mailsTo(m.sink, signed.email, CONFIRM)).toEqual([])
    expect(await userRow(signed.user.id)).toMatchObject({ email: signed.email })
    expect(await userRow(other.user.id)).toMatchObject({ email: other.email })
  })

  it('unverified address with updateEmailWithoutVerification: changed at once (lowercased), cookie re-issued, verification mailed to the new address', async () => {
    await m.server.gatehouse.config.update({ user: { changeEmail: { updateEmailWithoutVerification: true } } })
    try {
      const signed = await signUp(m.server.base)
      const newEmail = uniqueEmail('moved')
      const { result, mail } = await withMail(m, newEmail, VERIFY, () =>
        signed.client.post('/change-email', { newEmail: newEmail.toUpperCase(), callbackURL: '/settings' }),
      )
      expect(result.status).toBe(200)
      expect(result.body).toEqual({ status: true })
      expect(await userRow(signed.user.id)).toMatchObject({ email: newEmail, emailVerified: false })
      const session = await signed.client.get<SessionAnswer>('/get-session')
      expect(session.body.user.email).toBe(newEmail)
      const link = linkIn(mail, `${m.server.base}/verify-email`)
      expect((await verifiedClaims(new URL(link).searchParams.get('token') as string)).email).toBe(newEmail)
      const verified = await follow(anonymous(m.server), link)
      expect(verified.headers.get('location')).toBe('/settings')
      expect((await userRow(signed.user.id))?.emailVerified).toBe(true)
      // The old address can sign in no more; the new one can.
      expect(statusAndBody(await anonymous(m.server).post('/sign-in/email', { email: signed.email, password: signed.password }))).toEqual([
        401,
        ERRORS.INVALID_EMAIL_OR_PASSWORD,
      ])
      expect((await anonymous(m.server).post('/sign-in/email', { email: newEmail, password: signed.password })).status).toBe(200)
    } finally {
      await m.server.gatehouse.config.update({ user: { changeEmail: { updateEmailWithoutVerification: null } } })
    }
  })

  it('verified address: confirmation to the current address; its link (signed in) switches to the new address, unverified, and mails it', async () => {
    const signed = await signUp(m.server.base)
    await db().update(user).set({ emailVerified: true }).where(eq(user.id, signed.user.id))
    const newEmail = uniqueEmail('confirmed')
    const { result, mail } = await withMail(m, signed.email, CONFIRM, () =>
      signed.client.post('/change-email', { newEmail, callbackURL: '/changed' }),
    )
    expect(result.body).toEqual({ status: true })
    expect(mail.text).toContain(newEmail)
    expect(await userRow(signed.user.id)).toMatchObject({ email: signed.email, emailVerified: true })
    const link = linkIn(mail, `${m.server.base}/verify-email`)
    const claims = await verifiedClaims(new URL(link).searchParams.get('token') as string)
    expect(claims).toMatchObject({ email: signed.email, updateTo: newEmail })

    // Without the user's session the link is refused.
    const stranger = await follow(anonymous(m.server), link)
    expect(stranger.headers.get('location')).toBe('/changed?error=unauthorized')
    const plainStranger = await follow(anonymous(m.server), link.replace(/&callbackURL=.*$/, ''))
    expect(plainStranger.status).toBe(401)
    expect(plainStranger.body).toEqual({ code: 'UNAUTHORIZED', message: 'unauthorized' })

    const { result: confirmed, mail: verifyMail } = await withMail(m, newEmail, VERIFY, () =>
      follow<{ status: boolean; user: { email: string; emailVerified: boolean } }>(signed.client, link.replace(/&callbackURL=.*$/, '')),
    )
    expect(confirmed.status).toBe(200)
    expect(confirmed.body.status).toBe(true)
    expect(confirmed.body.user).toMatchObject({ email: newEmail, emailVerified: false })
    expect(await userRow(signed.user.id)).toMatchObject({ email: newEmail, emailVerified: false })
    expect((await signed.client.get<SessionAnswer>('/get-session')).body.user.email).toBe(newEmail)

    // The confirmation cannot be replayed: the current address no longer matches.
    const replay = await follow(signed.client, link)
    expect(replay.headers.get('location')).toBe('/changed?error=unauthorized')

    await follow(anonymous(m.server), linkIn(verifyMail, `${m.server.base}/verify-email`))
    expect((await userRow(signed.user.id))?.emailVerified).toBe(true)
  })

  it('refuses the same email, an invalid one, a disabled feature, and a verified user without confirmation mail', async () => {
    const signed = await signUp(m.server.base)
    const same = await signed.client.post('/change-email', { newEmail: signed.email.toUpperCase() })
    expect(same.status).toBe(400)
    expect(same.body).toEqual({ code: 'EMAIL_IS_THE_SAME', message: 'Email is the same' })
    const invalid = await signed.client.post<{ code: string }>('/change-email', { newEmail: 'nope' })
    expect(invalid.status).toBe(400)
    expect(invalid.body).toEqual({ code: 'VALIDATION_ERROR', message: '[body.newEmail] Invalid email address' })
    const evil = await signed.client.post('/change-email', { newEmail: uniqueEmail(), callbackURL: 'https://evil.example' })
    expect(evil.status).toBe(403)
    expect(evil.body).toEqual({ code: 'INVALID_CALLBACK_URL', message: 'Invalid callbackURL' })
    expect(statusAndBody(await anonymous(m.server).post('/change-email', { newEmail: uniqueEmail() }))).toEqual([401, ERRORS.UNAUTHORIZED])

    await db().update(user).set({ emailVerified: true }).where(eq(user.id, signed.user.id))
    await m.server.gatehouse.config.update({ user: { changeEmail: { sendChangeEmailVerification: false } } })
    try {
      const noMail = await signed.client.post('/change-email', { newEmail: uniqueEmail() })
      expect(noMail.status).toBe(400)
      expect(noMail.body).toEqual({ code: 'VERIFICATION_EMAIL_NOT_ENABLED', message: "Verification email isn't enabled" })
    } finally {
      await m.server.gatehouse.config.update({ user: { changeEmail: { sendChangeEmailVerification: true } } })
    }

    await m.server.gatehouse.config.update({ user: { changeEmail: { enabled: false } } })
    try {
      const disabled = await signed.client.post('/change-email', { newEmail: uniqueEmail() })
      expect(disabled.status).toBe(400)
      expect(disabled.body).toEqual({ code: 'CHANGE_EMAIL_DISABLED', message: 'Change email is disabled' })
    } finally {
      await m.server.gatehouse.config.update({ user: { changeEmail: { enabled: true } } })
    }
    expect((await userRow(signed.user.id))?.email).toBe(signed.email)
  })

  it('verification mail off: the unverified default path is refused (before the address is looked up); the at-once path sends no mail', async () => {
    await m.server.gatehouse.config.update({ emailVerification: { sendVerificationEmail: false } })
    try {
      const signed = await signUp(m.server.base)
      const other = await signUp(m.server.base)
      const newEmail = uniqueEmail('quiet')
      for (const address of [newEmail, other.email]) {
        const refused = await signed.client.post('/change-email', { newEmail: address })
        expect([refused.status, refused.body]).toEqual([
          400,
          { code: 'VERIFICATION_EMAIL_NOT_ENABLED', message: "Verification email isn't enabled" },
        ])
      }
      expect((await userRow(signed.user.id))?.email).toBe(signed.email)
      await m.server.gatehouse.config.update({ user: { changeEmail: { updateEmailWithoutVerification: true } } })
      expect((await signed.client.post('/change-email', { newEmail })).body).toEqual({ status: true })
      await settle(m)
      expect((await userRow(signed.user.id))?.email).toBe(newEmail)
      expect(mailsTo(m.sink, newEmail)).toEqual([])
    } finally {
      await m.server.gatehouse.config.update({
        emailVerification: { sendVerificationEmail: true },
        user: { changeEmail: { updateEmailWithoutVerification: null } },
      })
    }
  })
})

async function addAccount(userId: string, providerId: string, accountId: string, scope: string | null = null) {
  const now = new Date(m.server.clock.now())
  const id = `acc${Math.random().toString(36).slice(2)}`
  await db().insert(account).values({ id, userId, providerId, accountId, scope, createdAt: now, updatedAt: now })
  return id
}

describe('linked accounts', () => {
  it('GET /list-accounts returns both provider and providerId, and scopes as a list', async () => {
    const signed = await signUp(m.server.base)
    const githubId = await addAccount(signed.user.id, 'github', 'gh-123', 'read:user,user:email')
    const res = await signed.client.get<Array<Record<string, unknown>>>('/list-accounts')
    expect(res.status).toBe(200)
    expect(res.body).toHaveLength(2)
    const [credential, github] = res.body
    expect(credential).toMatchObject({ provider: 'credential', providerId: 'credential', accountId: signed.user.id, scopes: [] })
    expect(github).toEqual({
      id: githubId,
      provider: 'github',
      providerId: 'github',
      accountId: 'gh-123',
      userId: signed.user.id,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      scopes: ['read:user', 'user:email'],
    })
    expect(Object.keys(credential ?? {})).not.toContain('password')
    expect(statusAndBody(await anonymous(m.server).get('/list-accounts'))).toEqual([401, ERRORS.UNAUTHORIZED])
  })

  it('POST /unlink-account by provider (1.2 shape) or by account row id (current shape); never the last one', async () => {
    const signed = await signUp(m.server.base)
    const a = await addAccount(signed.user.id, 'github', 'gh-1')
    await addAccount(signed.user.id, 'github', 'gh-2')
    const byProvider = await signed.client.post('/unlink-account', { providerId: 'github', accountId: 'gh-2' })
    expect(byProvider.body).toEqual({ status: true })
    const byRowId = await signed.client.post('/unlink-account', { accountId: a })
    expect(byRowId.body).toEqual({ status: true })
    const missing = await signed.client.post('/unlink-account', { providerId: 'google' })
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({ code: 'FAILED_TO_UNLINK_LAST_ACCOUNT', message: "You can't unlink your last account" })
    await addAccount(signed.user.id, 'discord', 'd-1')
    const notFound = await signed.client.post('/unlink-account', { providerId: 'google' })
    expect(notFound.status).toBe(400)
    expect(notFound.body).toEqual({ code: 'ACCOUNT_NOT_FOUND', message: 'Account not found' })
    const neither = await signed.client.post<{ code: string }>('/unlink-account', {})
    expect([neither.status, neither.body]).toEqual([
      400,
      { code: 'VALIDATION_ERROR', message: '[body] providerId or accountId is required' },
    ])
    expect((await signed.client.post('/unlink-account', { providerId: 'discord' })).body).toEqual({ status: true })
    const last = await signed.client.post('/unlink-account', { providerId: 'credential' })
    expect(last.status).toBe(400)
    expect(last.body).toEqual({ code: 'FAILED_TO_UNLINK_LAST_ACCOUNT', message: "You can't unlink your last account" })

    await m.server.gatehouse.config.update({ account: { accountLinking: { allowUnlinkingAll: true } } })
    try {
      expect((await signed.client.post('/unlink-account', { providerId: 'credential' })).body).toEqual({ status: true })
      expect((await signed.client.get('/list-accounts')).body).toEqual([])
    } finally {
      await m.server.gatehouse.config.update({ account: { accountLinking: { allowUnlinkingAll: false } } })
    }
  })

  it('unlinking needs a fresh session (403 SESSION_NOT_FRESH after freshAge; freshAge 0 disables the check)', async () => {
    const signed = await signUp(m.server.base)
    await addAccount(signed.user.id, 'github', 'gh-fresh')
    m.server.clock.advanceSeconds(86400)
    const stale = await signed.client.post('/unlink-account', { providerId: 'github' })
    expect(stale.status).toBe(403)
    expect(stale.body).toEqual({ code: 'SESSION_NOT_FRESH', message: 'Session is not fresh' })
    await m.server.gatehouse.config.update({ session: { freshAge: 0 } })
    try {
      expect((await signed.client.post('/unlink-account', { providerId: 'github' })).body).toEqual({ status: true })
    } finally {
      await m.server.gatehouse.config.update({ session: { freshAge: 86400 } })
    }
    const again = new HttpClient(m.server.base)
    expect((await again.post('/sign-in/email', { email: signed.email, password: signed.password })).status).toBe(200)
  })
})
