import { twoFactorClient, usernameClient } from 'better-auth/client/plugins'
import { count, desc, eq, like } from 'drizzle-orm'
import { type TOTP, URI } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, mailOutbox, twoFactor, user, verification } from '../../../server/db/schema.js'
import { CookieJar, HttpClient, uniqueEmail } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { firstRow } from '../../../server/db/storage.js'
import type { UserRow } from '../../../server/core/sessions.js'
import { findUserById } from '../../../server/core/users.js'
import { enrolmentOverdue } from '../../../server/features/two-factor/service.js'

let server: TestServer
const PASSWORD = 'correct horse battery'

beforeAll(async () => {
  server = await startTestServer({ config: { twoFactor: { enabled: true } } })
})
afterAll(() => server.close())

/** The official client with the official twoFactorClient, as a browser app on the server's origin. */
function officialClient(jar = new CookieJar()) {
  const redirects: unknown[] = []
  const { client } = official(server, {
    jar,
    plugins: [
      twoFactorClient({
        onTwoFactorRedirect: (ctx) => {
          redirects.push(ctx)
        },
      }),
      usernameClient(),
    ],
  })
  return { client, jar, redirects }
}

/** A code computed independently (otpauth from the URI the server gave) for a moment of the test clock. */
function codeAt(totpURI: string, timestamp: number): string {
  const otp = URI.parse(totpURI) as TOTP
  return otp.generate({ timestamp })
}

const now = () => server.clock.now()

/** enable's answer narrowed to the TOTP method (the default). */
function totpAnswer(data: unknown): { method: 'totp'; totpURI: string; backupCodes: string[] } {
  const answer = data as { method: string; totpURI: string; backupCodes: string[] }
  expect(answer.method).toBe('totp')
  return answer as { method: 'totp'; totpURI: string; backupCodes: string[] }
}

/** Signs up and enrols TOTP through the official client; returns the URI, backup codes and a signed-in client. */
async function enrolled(extra: Record<string, unknown> = {}) {
  const email = uniqueEmail('mfa')
  const { client, jar } = officialClient()
  const up = await client.signUp.email({ name: 'Mfa', email, password: PASSWORD, ...extra })
  expect(up.error).toBeNull()
  const enable = await client.twoFactor.enable({ password: PASSWORD })
  expect(enable.error).toBeNull()
  const { totpURI, backupCodes } = totpAnswer(enable.data)
  // Not on until a first code is verified.
  expect((await client.getSession()).data?.user.twoFactorEnabled).toBe(false)
  const first = await client.twoFactor.verifyTotp({ code: codeAt(totpURI, now()) })
  expect(first.error).toBeNull()
  expect((await client.getSession()).data?.user.twoFactorEnabled).toBe(true)
  // The next code used by a test must be from a later step (a code is accepted once).
  server.clock.advanceSeconds(30)
  return { email, client, jar, totpURI, backupCodes, userId: up.data?.user.id as string }
}

async function challenged(email: string) {
  const c = officialClient()
  const res = await c.client.signIn.email({ email, password: PASSWORD })
  expect(res.error).toBeNull()
  expect(res.data).toEqual({ twoFactorRedirect: true, twoFactorMethods: ['totp', 'otp'] })
  return c
}

describe('two-factor enrolment (better-auth twoFactor wire, official client)', () => {
  it('enable answers a totpURI and 10 backup codes; enrolment completes only with a first valid code', async () => {
    const email = uniqueEmail('enrol')
    const { client } = officialClient()
    await client.signUp.email({ name: 'Enrol', email, password: PASSWORD })
    const wrongPassword = await client.twoFactor.enable({ password: 'not it at all' })
    expect(wrongPassword.error).toMatchObject({ status: 400, code: 'INVALID_PASSWORD', message: 'Invalid password' })
    const enable = { data: totpAnswer((await client.twoFactor.enable({ password: PASSWORD, issuer: 'Acme' })).data) }
    expect(enable.data?.method).toBe('totp')
    expect(enable.data?.totpURI).toMatch(/^otpauth:\/\/totp\/Acme:/)
    expect(enable.data?.backupCodes).toHaveLength(10)
    for (const code of enable.data?.backupCodes ?? []) expect(code).toMatch(/^[A-Za-z0-9]{5}-[A-Za-z0-9]{5}$/)
    const uri = URI.parse(enable.data?.totpURI as string) as TOTP
    expect(uri.digits).toBe(6)
    expect(uri.period).toBe(30)
    // Pending: a password sign-in still gives a session, with no second step.
    const other = officialClient()
    const pending = await other.client.signIn.email({ email, password: PASSWORD })
    expect(pending.data).toMatchObject({ redirect: false, user: { email, twoFactorEnabled: false } })
    // A wrong first code does not enable it.
    const wrong = await client.twoFactor.verifyTotp({
      code: '000000' === codeAt(enable.data?.totpURI as string, now()) ? '111111' : '000000',
    })
    expect(wrong.error).toMatchObject({ status: 401, code: 'INVALID_CODE', message: 'Invalid code' })
    const ok = await client.twoFactor.verifyTotp({ code: codeAt(enable.data?.totpURI as string, now()) })
    expect(ok.error).toBeNull()
    expect(ok.data?.user.twoFactorEnabled).toBe(true)
    expect((await client.getSession()).data?.user.twoFactorEnabled).toBe(true)
    // Enabling again is refused once verified.
    const again = await client.twoFactor.enable({ password: PASSWORD })
    expect(again.error).toMatchObject({ status: 400, code: 'TOTP_ALREADY_ENABLED', message: 'TOTP is already enabled' })
  })

  it('stores the secret and the backup codes encrypted', async () => {
    const { userId, totpURI, backupCodes } = await enrolled()
    const row = await firstRow(server.gatehouse.ctx.db.select().from(twoFactor).where(eq(twoFactor.userId, userId)))
    expect(row?.secret.startsWith('enc:v1:')).toBe(true)
    expect(row?.backupCodes.startsWith('enc:v1:')).toBe(true)
    const base32 = (URI.parse(totpURI) as TOTP).secret.base32
    expect(row?.secret).not.toContain(base32)
    for (const code of backupCodes) expect(row?.backupCodes).not.toContain(code)
  })
})

describe('sign-in with a second factor', () => {
  it('email and username sign-in answer twoFactorRedirect with the signed two_factor cookie and no session', async () => {
    const username = `mfa_${Date.now().toString(36)}`
    const { email } = await enrolled({ username })
    const c = await challenged(email)
    expect(c.redirects).toEqual([{ twoFactorMethods: ['totp', 'otp'] }])
    expect(c.jar.get('better-auth.two_factor')).toMatch(/^2fa-[A-Za-z0-9]{20}\.[A-Za-z0-9%]+%3D$/)
    expect(c.jar.get('better-auth.session_token')).toBeUndefined()
    expect((await c.client.getSession()).data).toBeNull()

    const u = officialClient()
    const byName = await u.client.signIn.username({ username, password: PASSWORD })
    expect(byName.data).toEqual({ twoFactorRedirect: true, twoFactorMethods: ['totp', 'otp'] })
    expect(u.jar.get('better-auth.session_token')).toBeUndefined()

    // Without the cookie there is nothing to verify.
    const bare = officialClient()
    const noCookie = await bare.client.twoFactor.verifyTotp({ code: '123456' })
    expect(noCookie.error).toMatchObject({ status: 401, code: 'INVALID_TWO_FACTOR_COOKIE', message: 'Invalid two factor cookie' })
  })

  it('a browser already signed in loses its session cookie when the second step is due', async () => {
    const { email, client, jar } = await enrolled()
    expect(jar.get('better-auth.session_token')).toBeDefined()
    const again = await client.signIn.email({ email, password: PASSWORD })
    expect(again.data).toEqual({ twoFactorRedirect: true, twoFactorMethods: ['totp', 'otp'] })
    expect(jar.get('better-auth.session_token')).toBeUndefined()
    expect(jar.get('better-auth.two_factor')).toBeDefined()
  })

  it('verify-totp creates the session; ±1 step is accepted, 2 steps are not, and a code is accepted once', async () => {
    const { email, totpURI } = await enrolled()
    // The step before now must not be the one enrolment used.
    server.clock.advanceSeconds(30)
    const c = await challenged(email)
    // Two steps old: outside the window.
    const stale = await c.client.twoFactor.verifyTotp({ code: codeAt(totpURI, now() - 60_000) })
    expect(stale.error).toMatchObject({ status: 401, code: 'INVALID_CODE' })
    // One step old: inside the window.
    const previous = codeAt(totpURI, now() - 30_000)
    const ok = await c.client.twoFactor.verifyTotp({ code: previous })
    expect(ok.error).toBeNull()
    expect(ok.data?.token).toMatch(/^[A-Za-z0-9]{32}$/)
    expect(c.jar.get('better-auth.two_factor')).toBeUndefined()
    const session = await c.client.getSession()
    expect(session.data?.user.email).toBe(email)
    expect(session.data?.session.token).toBe(ok.data?.token)

    // Replay: the same code (still inside its window) on a new challenge is refused.
    const d = await challenged(email)
    const replay = await d.client.twoFactor.verifyTotp({ code: previous })
    expect(replay.error).toMatchObject({ status: 401, code: 'INVALID_CODE' })
    // And so is any earlier step once a later one was used.
    const next = codeAt(totpURI, now())
    expect((await d.client.twoFactor.verifyTotp({ code: next })).error).toBeNull()
    const e = await challenged(email)
    expect((await e.client.twoFactor.verifyTotp({ code: next })).error).toMatchObject({ status: 401, code: 'INVALID_CODE' })
    // One step ahead (clock skew) works.
    expect((await e.client.twoFactor.verifyTotp({ code: codeAt(totpURI, now() + 30_000) })).error).toBeNull()
  })

  it('the window is ±1 step: on fresh challenges well past enrolment, codes 2, 3 and 5 steps old and 2 ahead are INVALID_CODE', async () => {
    const { email, totpURI } = await enrolled()
    // Ten steps on: every step tried below is later than the one enrolment used, so replay
    // protection cannot be what refuses them; only the window can.
    server.clock.advanceSeconds(300)
    for (const steps of [-2, -3, -5, 2]) {
      const c = await challenged(email)
      const res = await c.client.twoFactor.verifyTotp({ code: codeAt(totpURI, now() + steps * 30_000) })
      expect([steps, res.error?.status, res.error?.code]).toEqual([steps, 401, 'INVALID_CODE'])
      expect(c.jar.get('better-auth.session_token')).toBeUndefined()
    }
    // Inside the window: one step old, then one step ahead, each on a fresh challenge.
    for (const steps of [-1, 1]) {
      const c = await challenged(email)
      const res = await c.client.twoFactor.verifyTotp({ code: codeAt(totpURI, now() + steps * 30_000) })
      expect([steps, res.error]).toEqual([steps, null])
      expect((await c.client.getSession()).data?.user.email).toBe(email)
    }
  })

  it('backup codes work once each, and can be regenerated', async () => {
    const { email, backupCodes, client } = await enrolled()
    const c = await challenged(email)
    const used = await c.client.twoFactor.verifyBackupCode({ code: backupCodes[0] as string })
    expect(used.error).toBeNull()
    expect((await c.client.getSession()).data?.user.email).toBe(email)
    const d = await challenged(email)
    const again = await d.client.twoFactor.verifyBackupCode({ code: backupCodes[0] as string })
    expect(again.error).toMatchObject({ status: 401, code: 'INVALID_BACKUP_CODE', message: 'Invalid backup code' })
    const fresh = await client.twoFactor.generateBackupCodes({ password: PASSWORD })
    expect(fresh.data?.status).toBe(true)
    expect(fresh.data?.backupCodes).toHaveLength(10)
    const old = await d.client.twoFactor.verifyBackupCode({ code: backupCodes[1] as string })
    expect(old.error).toMatchObject({ status: 401, code: 'INVALID_BACKUP_CODE' })
    expect((await d.client.twoFactor.verifyBackupCode({ code: fresh.data?.backupCodes[0] as string })).error).toBeNull()
  })

  it('a one-time code goes out by mail through the outbox and expires after 3 minutes', async () => {
    const { email } = await enrolled()
    const c = await challenged(email)
    expect((await c.client.twoFactor.sendOtp()).data).toEqual({ status: true })
    const mail = await firstRow(
      server.gatehouse.ctx.db.select().from(mailOutbox).where(eq(mailOutbox.to, email)).orderBy(desc(mailOutbox.createdAt)),
    )
    expect(mail?.kind).toBe('two-factor-otp')
    const code = /verification code is (\d{6})/.exec(mail?.text ?? '')?.[1] as string
    expect(code).toMatch(/^\d{6}$/)
    const wrong = await c.client.twoFactor.verifyOtp({ code: code === '000000' ? '000001' : '000000' })
    expect(wrong.error).toMatchObject({ status: 401, code: 'INVALID_CODE' })
    const ok = await c.client.twoFactor.verifyOtp({ code })
    expect(ok.error).toBeNull()
    expect((await c.client.getSession()).data?.user.email).toBe(email)

    const d = await challenged(email)
    await d.client.twoFactor.sendOtp()
    const second = await firstRow(
      server.gatehouse.ctx.db.select().from(mailOutbox).where(eq(mailOutbox.to, email)).orderBy(desc(mailOutbox.createdAt)),
    )
    const code2 = /verification code is (\d{6})/.exec(second?.text ?? '')?.[1] as string
    server.clock.advanceSeconds(181)
    const late = await d.client.twoFactor.verifyOtp({ code: code2 })
    expect(late.error).toMatchObject({ status: 400, code: 'OTP_HAS_EXPIRED', message: 'OTP has expired' })
  })

  it('trustDevice sets trust_device for 30 days; it skips the second step, is rotated on use, and disable revokes it', async () => {
    const { email, totpURI } = await enrolled()
    const jar = new CookieJar()
    const c = officialClient(jar)
    await c.client.signIn.email({ email, password: PASSWORD })
    const setCookies: string[] = []
    const raw = new HttpClient(`${server.origin}/api/auth`)
    for (const [k, v] of jar.cookies) raw.jar.cookies.set(k, v)
    const verified = await raw.post('/two-factor/verify-totp', { code: codeAt(totpURI, now()), trustDevice: true })
    setCookies.push(...verified.cookies)
    expect(verified.status).toBe(200)
    const trust = setCookies.find((l) => l.startsWith('better-auth.trust_device='))
    expect(trust).toMatch(/; Max-Age=2592000; Path=\/; HttpOnly; SameSite=Lax$/)
    const first = raw.jar.get('better-auth.trust_device') as string

    // Signed out, the same browser signs in with the password alone; the cookie is rotated.
    raw.jar.cookies.delete('better-auth.session_token')
    const again = await raw.post<{ token: string }>('/sign-in/email', { email, password: PASSWORD })
    expect(again.status).toBe(200)
    expect(again.body.token).toMatch(/^[A-Za-z0-9]{32}$/)
    const second = raw.jar.get('better-auth.trust_device') as string
    expect(second).toBeDefined()
    expect(second).not.toBe(first)
    // The old value no longer works.
    const stolen = new HttpClient(`${server.origin}/api/auth`)
    stolen.jar.cookies.set('better-auth.trust_device', first)
    const withOld = await stolen.post('/sign-in/email', { email, password: PASSWORD })
    expect(withOld.body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ['totp', 'otp'] })

    // Disabling two-factor revokes every trusted device.
    const signedIn = new HttpClient(`${server.origin}/api/auth`)
    signedIn.jar.cookies.set('better-auth.session_token', raw.jar.get('better-auth.session_token') as string)
    expect((await signedIn.post('/two-factor/disable', { password: PASSWORD })).body).toEqual({ status: true })
    const trusted = await server.gatehouse.ctx.db
      .select({ n: count() })
      .from(verification)
      .where(like(verification.identifier, 'trust-device-%'))
    expect(trusted).toEqual([{ n: 0 }])
    const plain = await officialClient().client.signIn.email({ email, password: PASSWORD })
    expect(plain.data).toMatchObject({ redirect: false, user: { email, twoFactorEnabled: false } })
  })
})

describe('guessing is bounded', () => {
  it('5 attempts per challenge, then a new sign-in is needed', async () => {
    const { email, totpURI } = await enrolled()
    const c = await challenged(email)
    const good = codeAt(totpURI, now())
    const bad = good === '999999' ? '999998' : '999999'
    for (let i = 0; i < 5; i++) {
      expect((await c.client.twoFactor.verifyTotp({ code: bad })).error).toMatchObject({ status: 401, code: 'INVALID_CODE' })
    }
    const sixth = await c.client.twoFactor.verifyTotp({ code: good })
    expect(sixth.error).toMatchObject({
      status: 400,
      code: 'TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE',
      message: 'Too many attempts. Please request a new code.',
    })
    expect(c.jar.get('better-auth.two_factor')).toBeUndefined()
    const d = await challenged(email)
    expect((await d.client.twoFactor.verifyTotp({ code: good })).error).toBeNull()
  })

  it('50 parallel wrong codes on one challenge: exactly 5 are checked', async () => {
    const { email, totpURI, userId } = await enrolled()
    const c = await challenged(email)
    const good = codeAt(totpURI, now())
    const bad = good === '999999' ? '999998' : '999999'
    const cookie = c.jar.header()
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        fetch(`${server.base}/two-factor/verify-totp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: server.origin, cookie },
          body: JSON.stringify({ code: bad }),
        }).then(async (r) => `${r.status} ${((await r.json()) as { code: string }).code}`),
      ),
    )
    const tally: Record<string, number> = {}
    for (const a of answers) tally[a] = (tally[a] ?? 0) + 1
    expect(tally).toEqual({ '401 INVALID_CODE': 5, '400 TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE': 1, '401 INVALID_TWO_FACTOR_COOKIE': 44 })
    const failures = (await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.targetUserId, userId))).filter(
      (e) => e.type === 'two-factor.verify' && e.outcome === 'failure' && (e.detail as { reason?: string })?.reason === 'INVALID_CODE',
    )
    expect(failures).toHaveLength(5)
  })

  it('10 failures lock second-factor verification for 15 minutes, across challenges', async () => {
    const { email, totpURI } = await enrolled()
    const bad = (good: string) => (good === '999999' ? '999998' : '999999')
    for (let round = 0; round < 2; round++) {
      const c = await challenged(email)
      for (let i = 0; i < 5; i++) {
        expect((await c.client.twoFactor.verifyTotp({ code: bad(codeAt(totpURI, now())) })).error).toMatchObject({
          status: 401,
          code: 'INVALID_CODE',
        })
      }
    }
    const locked = await challenged(email)
    const refused = await locked.client.twoFactor.verifyTotp({ code: codeAt(totpURI, now()) })
    expect(refused.error).toMatchObject({
      status: 429,
      code: 'ACCOUNT_TEMPORARILY_LOCKED',
      message: 'Too many failed verification attempts. Your account is temporarily locked. Please try again later.',
    })
    server.clock.advanceSeconds(14 * 60)
    const stillLocked = await challenged(email)
    expect((await stillLocked.client.twoFactor.verifyBackupCode({ code: 'xxxxx-xxxxx' })).error).toMatchObject({ status: 429 })
    server.clock.advanceSeconds(61)
    const after = await challenged(email)
    expect((await after.client.twoFactor.verifyTotp({ code: codeAt(totpURI, now()) })).error).toBeNull()
  })
})

describe('enforcement for roles', () => {
  it('asks users of an enforced role to enrol during the grace period, then refuses them', async () => {
    const { gatehouse } = server
    gatehouse.config.update({ twoFactor: { enforcement: { roles: ['admin'], gracePeriod: 3600 } } })
    try {
      const email = uniqueEmail('boss')
      const { client } = officialClient()
      const up = await client.signUp.email({ name: 'Boss', email, password: PASSWORD })
      await gatehouse.ctx.db
        .update(user)
        .set({ role: 'admin' })
        .where(eq(user.id, up.data?.user.id as string))
      const first = await officialClient().client.signIn.email({ email, password: PASSWORD })
      // The client revives ISO dates.
      const deadline = new Date(now() + 3600_000)
      expect(first.data).toMatchObject({ redirect: false, twoFactorEnrollment: { required: true, deadline } })
      server.clock.advanceSeconds(3601)
      // Past the grace the session opens (the hosted pages' enrolment step needs one), marked overdue;
      // the faces refuse it (core/admission.ts) until a second factor exists.
      const lateClient = officialClient()
      const late = await lateClient.client.signIn.email({ email, password: PASSWORD })
      expect(late.error).toBeNull()
      expect(late.data).toMatchObject({ redirect: false, twoFactorEnrollment: { required: true, deadline, overdue: true } })
      const status = await lateClient.client.$fetch<Record<string, unknown>>('/two-factor/status', { method: 'GET' })
      expect(status.data).toMatchObject({
        enrolmentRequired: true,
        enrolmentOverdue: true,
        enrolmentDeadline: deadline,
      })
      expect(await enrolmentOverdue(gatehouse.ctx, (await findUserById(gatehouse.ctx, up.data?.user.id as string)) as UserRow)).toBe(
        'TWO_FACTOR_ENROLLMENT_REQUIRED',
      )
      // An ordinary user is not concerned.
      const plain = officialClient()
      const plainEmail = uniqueEmail('plain')
      await plain.client.signUp.email({ name: 'Plain', email: plainEmail, password: PASSWORD })
      const ordinary = await officialClient().client.signIn.email({ email: plainEmail, password: PASSWORD })
      expect(ordinary.data).not.toHaveProperty('twoFactorEnrollment')
    } finally {
      gatehouse.config.update({ twoFactor: { enforcement: null } })
    }
  })
})

describe('audit', () => {
  it('records enrolment, challenges, successes, failures and disabling', async () => {
    const { userId } = await enrolled()
    const types = (await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.targetUserId, userId))).map(
      (e) => `${e.type}:${e.outcome}`,
    )
    expect(types).toEqual(expect.arrayContaining(['two-factor.enrolment-started:success', 'two-factor.enabled:success']))
    const all = new Set((await server.gatehouse.ctx.db.select().from(auditEvent)).map((e) => `${e.type}:${e.outcome}`))
    for (const t of [
      'two-factor.challenge:success',
      'two-factor.verify:success',
      'two-factor.verify:failure',
      'two-factor.disabled:success',
      'two-factor.otp-sent:success',
    ]) {
      expect(all.has(t)).toBe(true)
    }
  })
})

describe('off by default', () => {
  it('answers 404 on every two-factor path when twoFactor.enabled is false', async () => {
    const off = await startTestServer()
    try {
      const res = await fetch(`${off.base}/two-factor/verify-totp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: off.origin },
        body: JSON.stringify({ code: '123456' }),
      })
      expect(res.status).toBe(404)
    } finally {
      await off.close()
    }
  })
})
