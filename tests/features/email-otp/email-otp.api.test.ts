import { emailOTPClient } from 'better-auth/client/plugins'
import { and, eq, like } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, session, user, verification } from '../../../server/db/schema.js'
import { firstRow } from '../../../server/db/storage.js'
import { CookieJar, signUp, uniqueEmail } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import type { ReceivedMail } from '../../helpers/smtp.js'
import { anonymous, type MailServer, startMailServer, withMail } from '../../helpers/mail-flow.js'

let m: MailServer
beforeAll(async () => {
  m = await startMailServer({ twoFactor: { enabled: true } })
  // Through the stored layer, so that tests can switch options live.
  await m.server.gatehouse.config.update({ emailOTP: { enabled: true } })
})
afterAll(() => m.close())

function officialClient(jar = new CookieJar()) {
  return official(m.server, { jar, plugins: [emailOTPClient()] })
}

const db = () => m.server.gatehouse.ctx.db
const userRow = (email: string) => firstRow(db().select().from(user).where(eq(user.email, email)))
const sessionsOf = async (userId: string) => (await db().select().from(session).where(eq(session.userId, userId))).length
const codeIn = (mail: ReceivedMail): string => (mail.subject.match(/: (\d+)$/) as RegExpMatchArray)[1] as string

/** Asks for a code of a type by raw HTTP and returns it as mailed. */
async function mailedCode(email: string, type: 'sign-in' | 'email-verification' | 'forget-password'): Promise<string> {
  const { mail, result } = await withMail(m, email, /code/, () =>
    anonymous(m.server).post('/email-otp/send-verification-otp', { email, type }),
  )
  expect(result.status).toBe(200)
  expect(result.body).toEqual({ success: true })
  return codeIn(mail)
}

async function verifiedUser(email: string) {
  await signUp(m.server.base, { email })
  await db().update(user).set({ emailVerified: true }).where(eq(user.email, email))
  return (await userRow(email)) as NonNullable<Awaited<ReturnType<typeof userRow>>>
}

const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0')

describe('email one-time codes', () => {
  it('signs up and in through the official client: code mailed, {token, user}, session cookie', async () => {
    const email = uniqueEmail('otp-new')
    const { client, jar } = officialClient()
    const { mail, result } = await withMail(m, email, /sign-in code/, () => client.emailOtp.sendVerificationOtp({ email, type: 'sign-in' }))
    expect(result.error).toBeNull()
    expect(result.data).toEqual({ success: true })
    const otp = codeIn(mail)
    expect(otp).toMatch(/^\d{6}$/)
    expect(mail.text).toContain(otp)
    const signedIn = await client.signIn.emailOtp({ email, otp, name: 'Otto' })
    expect(signedIn.error).toBeNull()
    expect(Object.keys(signedIn.data ?? {}).sort()).toEqual(['token', 'user'])
    expect(signedIn.data?.user).toMatchObject({ email, name: 'Otto', emailVerified: true })
    expect(jar.get('better-auth.session_token')).toMatch(new RegExp(`^${signedIn.data?.token}\\.`))
    expect((await client.getSession()).data?.user.email).toBe(email)
    // Used once.
    const again = await anonymous(m.server).post('/sign-in/email-otp', { email, otp })
    expect(again.status).toBe(400)
    expect(again.body).toMatchObject({ code: 'INVALID_OTP', message: 'Invalid OTP' })
  })

  it('refuses a wrong code, then an expired one (TestClock)', async () => {
    const email = uniqueEmail('otp-exp')
    await verifiedUser(email)
    const otp = await mailedCode(email, 'sign-in')
    const bad = await anonymous(m.server).post('/sign-in/email-otp', { email, otp: wrong(otp) })
    expect([bad.status, bad.body]).toEqual([400, { code: 'INVALID_OTP', message: 'Invalid OTP' }])
    m.server.clock.advanceSeconds(301)
    const late = await anonymous(m.server).post('/sign-in/email-otp', { email, otp })
    expect([late.status, late.body]).toEqual([400, { code: 'OTP_EXPIRED', message: 'OTP expired' }])
    const after = await anonymous(m.server).post('/sign-in/email-otp', { email, otp })
    expect(after.body).toMatchObject({ code: 'INVALID_OTP' })
  })

  it('a wrong guess near the end never extends the code: the right code after the original expiry is expired', async () => {
    const email = uniqueEmail('otp-noextend')
    await verifiedUser(email)
    const otp = await mailedCode(email, 'sign-in')
    m.server.clock.advanceSeconds(290)
    const bad = await anonymous(m.server).post('/sign-in/email-otp', { email, otp: wrong(otp) })
    expect([bad.status, bad.body]).toEqual([400, { code: 'INVALID_OTP', message: 'Invalid OTP' }])
    m.server.clock.advanceSeconds(11)
    const late = await anonymous(m.server).post('/sign-in/email-otp', { email, otp })
    expect([late.status, late.body]).toEqual([400, { code: 'OTP_EXPIRED', message: 'OTP expired' }])
  })

  it('allowedAttempts: the right code is refused after 3 wrong ones (403 TOO_MANY_ATTEMPTS)', async () => {
    const email = uniqueEmail('otp-attempts')
    await verifiedUser(email)
    const otp = await mailedCode(email, 'sign-in')
    for (let i = 0; i < 3; i++) {
      const res = await anonymous(m.server).post('/sign-in/email-otp', { email, otp: wrong(otp) })
      expect(res.body).toMatchObject({ code: 'INVALID_OTP' })
    }
    const blocked = await anonymous(m.server).post('/sign-in/email-otp', { email, otp })
    expect([blocked.status, blocked.body]).toEqual([403, { code: 'TOO_MANY_ATTEMPTS', message: 'Too many attempts' }])
    // The code is void from then on.
    expect((await anonymous(m.server).post('/sign-in/email-otp', { email, otp })).body).toMatchObject({ code: 'INVALID_OTP' })
  })

  it('parallel guesses: no more than allowedAttempts are ever compared, and the code cannot win afterwards', async () => {
    const email = uniqueEmail('otp-race')
    const found = await verifiedUser(email)
    const otp = await mailedCode(email, 'sign-in')
    const guesses = Array.from({ length: 30 }, (_, i) => String((Number(otp) + 1 + i) % 1_000_000).padStart(6, '0'))
    const answers = await Promise.all(guesses.map((g) => anonymous(m.server).post('/sign-in/email-otp', { email, otp: g })))
    for (const a of answers) expect([400, 403]).toContain(a.status)
    // A guess is compared only by the request that took the record out; each comparison puts it back with
    // one more attempt counted, and the request that finds 3 counted answers 403 and leaves it out. So:
    // at most one 403, and the record (if still there) counted at most 3.
    expect(answers.filter((a) => a.status === 403)).toHaveLength(answers.some((a) => a.status === 403) ? 1 : 0)
    const row = await firstRow(
      db()
        .select()
        .from(verification)
        .where(eq(verification.identifier, `sign-in-otp-${email}`)),
    )
    const counted = row ? Number(row.value.split(':')[1]) : null
    if (counted !== null) expect(counted).toBeLessThanOrEqual(3)
    else expect(answers.filter((a) => a.status === 403)).toHaveLength(1)
    // The right code afterwards wins only while fewer than 3 wrong guesses were counted.
    const right = await anonymous(m.server).post('/sign-in/email-otp', { email, otp })
    if (counted === null) expect(right.body).toMatchObject({ code: 'INVALID_OTP' })
    else if (counted >= 3) expect(right.body).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' })
    else expect(right.status).toBe(200)
    expect(await sessionsOf(found.id)).toBeLessThanOrEqual(2)
    // Every wrong guess that was compared is audited: never more than allowedAttempts.
    const compared = (await db().select().from(auditEvent).where(eq(auditEvent.type, 'user.email-otp-failed'))).filter((e) =>
      JSON.stringify(e.detail).includes(`sign-in-otp-${email}`),
    )
    expect(compared.length).toBeGreaterThanOrEqual(1)
    expect(compared.length).toBeLessThanOrEqual(3)
  })

  it('two parallel sign-ins with the right code make exactly one session', async () => {
    const email = uniqueEmail('otp-twice')
    const found = await verifiedUser(email)
    const before = await sessionsOf(found.id)
    const otp = await mailedCode(email, 'sign-in')
    const answers = await Promise.all(Array.from({ length: 6 }, () => anonymous(m.server).post('/sign-in/email-otp', { email, otp })))
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1)
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.body).toMatchObject({ code: 'INVALID_OTP' })
    expect(await sessionsOf(found.id)).toBe(before + 1)
  })

  it('parallel sign-ins with one code for a new address: one user, one session, the others INVALID_OTP', async () => {
    const email = uniqueEmail('otp-twice-new')
    const otp = await mailedCode(email, 'sign-in')
    const answers = await Promise.all(Array.from({ length: 6 }, () => anonymous(m.server).post('/sign-in/email-otp', { email, otp })))
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1)
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.body).toMatchObject({ code: 'INVALID_OTP' })
    const created = await userRow(email)
    expect(await sessionsOf(created?.id as string)).toBe(1)
  })

  it('verifies an address with an email-verification code (check first, then verify-email)', async () => {
    const email = uniqueEmail('otp-verify')
    const { client } = officialClient()
    await signUp(m.server.base, { email })
    expect((await userRow(email))?.emailVerified).toBe(false)
    const otp = await mailedCode(email, 'email-verification')
    const checked = await client.emailOtp.checkVerificationOtp({ email, type: 'email-verification', otp })
    expect(checked.data).toEqual({ success: true })
    const verified = await client.emailOtp.verifyEmail({ email, otp })
    expect(verified.error).toBeNull()
    expect(verified.data).toMatchObject({ status: true, token: null, user: { email, emailVerified: true } })
    expect((await userRow(email))?.emailVerified).toBe(true)
    const reused = await anonymous(m.server).post('/email-otp/verify-email', { email, otp })
    expect(reused.body).toMatchObject({ code: 'INVALID_OTP' })
  })

  it('verify-email while signed in re-issues the session cookie cache with the verified address', async () => {
    await m.server.gatehouse.config.update({ session: { cookieCache: { enabled: true } } })
    try {
      const email = uniqueEmail('otp-cache')
      const { client, jar } = officialClient()
      expect((await client.signUp.email({ email, name: 'Cache', password: 'correct horse battery' })).error).toBeNull()
      expect((await client.getSession()).data?.user.emailVerified).toBe(false)
      const before = jar.get('better-auth.session_data')
      expect(before).toBeDefined()
      const otp = await mailedCode(email, 'email-verification')
      expect((await client.emailOtp.verifyEmail({ email, otp })).error).toBeNull()
      expect(jar.get('better-auth.session_data')).not.toBe(before)
      expect((await client.getSession()).data?.user.emailVerified).toBe(true)
    } finally {
      await m.server.gatehouse.config.update({ session: { cookieCache: { enabled: false } } })
    }
  })

  it('resets a password with a forget-password code', async () => {
    const email = uniqueEmail('otp-reset')
    await verifiedUser(email)
    const otp = await mailedCode(email, 'forget-password')
    const { client } = officialClient()
    const short = await anonymous(m.server).post('/email-otp/reset-password', { email, otp, password: 'short' })
    expect([short.status, short.body]).toEqual([400, { code: 'PASSWORD_TOO_SHORT', message: 'Password too short' }])
    const reset = await client.emailOtp.resetPassword({ email, otp, password: 'a brand new passphrase' })
    expect(reset.data).toEqual({ success: true })
    const signIn = await anonymous(m.server).post('/sign-in/email', { email, password: 'a brand new passphrase' })
    expect(signIn.status).toBe(200)
    const again = await anonymous(m.server).post('/email-otp/reset-password', { email, otp, password: 'another passphrase 2' })
    expect(again.body).toMatchObject({ code: 'INVALID_OTP' })
  })

  it('sends nothing for an unknown address unless it is a sign-in with sign-up allowed; invalid input is refused', async () => {
    const unknown = uniqueEmail('otp-unknown')
    const res = await anonymous(m.server).post('/email-otp/send-verification-otp', { email: unknown, type: 'forget-password' })
    expect(res.body).toEqual({ success: true })
    const stored = await db()
      .select()
      .from(verification)
      .where(like(verification.identifier, `%-otp-${unknown}`))
    expect(stored).toEqual([])
    const bad = await anonymous(m.server).post('/email-otp/send-verification-otp', { email: 'not-an-email', type: 'sign-in' })
    expect([bad.status, bad.body]).toEqual([400, { code: 'INVALID_EMAIL', message: 'Invalid email' }])
    const change = await anonymous(m.server).post('/email-otp/send-verification-otp', { email: unknown, type: 'change-email' })
    expect(change.status).toBe(400)
    await m.server.gatehouse.config.update({ emailOTP: { disableSignUp: true } })
    try {
      const otp = await anonymous(m.server).post('/email-otp/send-verification-otp', { email: unknown, type: 'sign-in' })
      expect(otp.body).toEqual({ success: true })
      expect(
        await db()
          .select()
          .from(verification)
          .where(like(verification.identifier, `%-otp-${unknown}`)),
      ).toEqual([])
    } finally {
      await m.server.gatehouse.config.update({ emailOTP: { disableSignUp: false } })
    }
  })

  it('goes through the sign-in pipeline: a banned user is refused (audited), a 2FA user is challenged', async () => {
    const banned = uniqueEmail('otp-banned')
    const b = await verifiedUser(banned)
    await db().update(user).set({ banned: true }).where(eq(user.id, b.id))
    const otp = await mailedCode(banned, 'sign-in')
    const refused = await anonymous(m.server).post('/sign-in/email-otp', { email: banned, otp })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ code: 'BANNED_USER' })
    const audited = await db()
      .select()
      .from(auditEvent)
      .where(and(eq(auditEvent.type, 'user.sign-in'), eq(auditEvent.targetUserId, b.id), eq(auditEvent.outcome, 'failure')))
    expect(audited.length).toBeGreaterThan(0)

    const mfa = uniqueEmail('otp-2fa')
    const u = await verifiedUser(mfa)
    await db().update(user).set({ twoFactorEnabled: true }).where(eq(user.id, u.id))
    const before = await sessionsOf(u.id)
    const code = await mailedCode(mfa, 'sign-in')
    const challenged = await anonymous(m.server).post('/sign-in/email-otp', { email: mfa, otp: code })
    expect(challenged.status).toBe(200)
    expect(challenged.body).toMatchObject({ twoFactorRedirect: true })
    expect(challenged.cookies.some((c) => c.startsWith('better-auth.two_factor='))).toBe(true)
    expect(await sessionsOf(u.id)).toBe(before)
  })

  it('an unverified account under requireEmailVerification: the code proves the address, unproven sessions are revoked', async () => {
    await m.server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: true } })
    try {
      const email = uniqueEmail('otp-unverified')
      await signUp(m.server.base, { email })
      const found = await userRow(email)
      const otp = await mailedCode(email, 'sign-in')
      const res = await anonymous(m.server).post('/sign-in/email-otp', { email, otp })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ user: { emailVerified: true } })
      expect(await sessionsOf(found?.id as string)).toBe(1)
    } finally {
      await m.server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: false } })
    }
  })
})

describe('email change by code (emailOTP.changeEmail)', () => {
  const enable = (changeEmail: { enabled?: boolean | null; verifyCurrentEmail?: boolean | null }) =>
    m.server.gatehouse.config.update({ emailOTP: { changeEmail } })

  it('the official client asks for a code at the new address and changes to it: verified, cookies re-issued', async () => {
    await enable({ enabled: true })
    try {
      const email = uniqueEmail('chg-old')
      const newEmail = uniqueEmail('chg-new')
      const { client, jar } = officialClient()
      expect((await client.signUp.email({ email, password: 'correct horse battery', name: 'Chg' })).error).toBeNull()
      const before = jar.get('better-auth.session_token')
      const { mail, result } = await withMail(m, newEmail, /email change code/, () => client.emailOtp.requestEmailChange({ newEmail }))
      expect(result.error).toBeNull()
      expect(result.data).toEqual({ success: true })
      const otp = codeIn(mail)
      expect(
        await firstRow(
          db()
            .select()
            .from(verification)
            .where(like(verification.identifier, `change-email-otp-%:${newEmail}`)),
        ),
      ).toBeDefined()

      const wrongTry = await client.emailOtp.changeEmail({ newEmail, otp: wrong(otp) })
      expect(wrongTry.error).toMatchObject({ status: 400, code: 'INVALID_OTP', message: 'Invalid OTP' })
      const changed = await client.emailOtp.changeEmail({ newEmail, otp })
      expect(changed.error).toBeNull()
      expect(changed.data).toEqual({ success: true })
      expect(jar.get('better-auth.session_token')).toBe(before)
      expect((await client.getSession()).data?.user).toMatchObject({ email: newEmail, emailVerified: true })
      expect(await userRow(email)).toBeUndefined()
      const events = await db().select().from(auditEvent).where(eq(auditEvent.type, 'user.email-changed'))
      expect(events.map((e) => e.detail)).toContainEqual({ from: email, to: newEmail, method: 'email-otp' })
      // Spent: the same code again is refused.
      const reused = await client.emailOtp.changeEmail({ newEmail: uniqueEmail('chg-other'), otp })
      expect(reused.error).toMatchObject({ status: 400, code: 'INVALID_OTP' })
    } finally {
      await enable({ enabled: null })
    }
  })

  it('refuses by message while off, for the same address, a taken one (no mail, no code), a signed-out caller', async () => {
    const owner = await signUp(m.server.base)
    const other = await signUp(m.server.base)
    const off = await owner.client.post('/email-otp/request-email-change', { newEmail: uniqueEmail('chg-off') })
    expect([off.status, off.body]).toEqual([400, { message: 'Change email with OTP is disabled' }])
    await enable({ enabled: true })
    try {
      const same = await owner.client.post('/email-otp/change-email', { newEmail: owner.email.toUpperCase(), otp: '123456' })
      expect([same.status, same.body]).toEqual([400, { message: 'Email is the same' }])
      const taken = await owner.client.post('/email-otp/request-email-change', { newEmail: other.email })
      expect([taken.status, taken.body]).toEqual([200, { success: true }])
      expect(
        await firstRow(
          db()
            .select()
            .from(verification)
            .where(like(verification.identifier, `change-email-otp-%:${other.email}`)),
        ),
      ).toBeUndefined()
      const signedOut = await anonymous(m.server).post('/email-otp/change-email', { newEmail: uniqueEmail('x'), otp: '123456' })
      expect(signedOut.status).toBe(401)
      const typed = await anonymous(m.server).post('/email-otp/send-verification-otp', { email: other.email, type: 'change-email' })
      expect([typed.status, typed.body]).toEqual([400, { message: 'Invalid OTP type' }])
    } finally {
      await enable({ enabled: null })
    }
  })

  it('verifyCurrentEmail: an email-verification code of the current address is required and spent first', async () => {
    await enable({ enabled: true, verifyCurrentEmail: true })
    try {
      const owner = await signUp(m.server.base)
      const newEmail = uniqueEmail('chg-cur')
      const missing = await owner.client.post('/email-otp/request-email-change', { newEmail })
      expect([missing.status, missing.body]).toEqual([400, { message: 'OTP is required to verify current email' }])
      const current = await mailedCode(owner.email, 'email-verification')
      const wrongCurrent = await owner.client.post('/email-otp/request-email-change', { newEmail, otp: wrong(current) })
      expect(wrongCurrent.body).toMatchObject({ code: 'INVALID_OTP' })
      const { mail, result } = await withMail(m, newEmail, /email change code/, () =>
        owner.client.post('/email-otp/request-email-change', { newEmail, otp: current }),
      )
      expect(result.status).toBe(200)
      const changed = await owner.client.post('/email-otp/change-email', { newEmail, otp: codeIn(mail) })
      expect(changed.status).toBe(200)
      expect((await owner.client.get<{ user: { email: string } }>('/get-session')).body.user.email).toBe(newEmail)
    } finally {
      await enable({ enabled: null, verifyCurrentEmail: null })
    }
  })
})
