import { eq } from 'drizzle-orm'
import { jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { session, user } from '../../../server/db/schema.js'
import { firstRow } from '../../../server/db/storage.js'
import { ERRORS, HttpClient, signUp, statusAndBody, uniqueEmail } from '../../helpers/http.js'
import { TEST_SECRET } from '../../helpers/signatures.js'
import { anonymous, follow, linkIn, type MailServer, mailsTo, settle, startMailServer, withMail } from '../../helpers/mail-flow.js'

const SUBJECT = /^Verify your email address/

let m: MailServer
beforeAll(async () => {
  // Options tests change live go through the stored layer (start-up overrides would win over it).
  m = await startMailServer()
  await restore()
})
afterAll(() => m.close())

const restore = () =>
  m.server.gatehouse.config.update({
    emailVerification: { sendOnSignUp: true, autoSignInAfterVerification: false, sendVerificationEmail: true, expiresIn: 3600 },
    emailAndPassword: { requireEmailVerification: false },
  })

const userRow = async (email: string) => await firstRow(m.server.gatehouse.ctx.db.select().from(user).where(eq(user.email, email)))

describe('email verification by link', () => {
  it('mails a signed HS256 link on sign-up; following it verifies the address (JSON without callbackURL)', async () => {
    const email = uniqueEmail('verify')
    const { mail } = await withMail(m, email, SUBJECT, () => signUp(m.server.base, { email }))
    expect(mail.html).toContain('Verify email address')
    const link = linkIn(mail, `${m.server.base}/verify-email?token=`)
    const url = new URL(link)
    expect(url.searchParams.get('callbackURL')).toBe('/')
    const token = url.searchParams.get('token') as string
    // Verified with jose and the test secret (HS256 only), at the server's clock.
    const { payload: claims, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(TEST_SECRET), {
      algorithms: ['HS256'],
      currentDate: new Date(m.server.clock.now()),
    })
    expect(protectedHeader).toEqual({ alg: 'HS256' })
    await expect(
      jwtVerify(token, new TextEncoder().encode('another-secret-0123456789abcdef'), { currentDate: new Date(m.server.clock.now()) }),
    ).rejects.toThrow()
    expect(claims.email).toBe(email)
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600)
    expect((await userRow(email))?.emailVerified).toBe(false)

    const res = await follow(anonymous(m.server), link.replace(/&callbackURL=[^&]*/, ''))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: true, user: null })
    expect((await userRow(email))?.emailVerified).toBe(true)
    // Replaying the link before it expires is harmless.
    const again = await follow(anonymous(m.server), link.replace(/&callbackURL=[^&]*/, ''))
    expect(again.body).toEqual({ status: true, user: null })
  })

  it('redirects to the callbackURL given at sign-up', async () => {
    const email = uniqueEmail('verifycb')
    const { mail } = await withMail(m, email, SUBJECT, () =>
      signUp(m.server.base, { email, callbackURL: `${m.server.origin}/welcome?from=mail` }),
    )
    const link = linkIn(mail, `${m.server.base}/verify-email`)
    expect(new URL(link).searchParams.get('callbackURL')).toBe(`${m.server.origin}/welcome?from=mail`)
    const res = await follow(anonymous(m.server), link)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(`${m.server.origin}/welcome?from=mail`)
    expect(res.cookies).toEqual([])
    expect((await userRow(email))?.emailVerified).toBe(true)
  })

  it('sends nothing on sign-up when sendOnSignUp is off', async () => {
    await m.server.gatehouse.config.update({ emailVerification: { sendOnSignUp: false } })
    try {
      const email = uniqueEmail('nomail')
      await signUp(m.server.base, { email })
      // A later explicit request is delivered: everything before it was delivered too.
      await withMail(m, email, SUBJECT, () => anonymous(m.server).post('/send-verification-email', { email }))
      expect(mailsTo(m.sink, email)).toHaveLength(1)
    } finally {
      await restore()
    }
  })

  it('autoSignInAfterVerification creates a session and sets the cookie', async () => {
    await m.server.gatehouse.config.update({ emailVerification: { autoSignInAfterVerification: true } })
    try {
      const email = uniqueEmail('auto')
      const { mail } = await withMail(m, email, SUBJECT, () => signUp(m.server.base, { email, callbackURL: '/done' }))
      const browser = anonymous(m.server)
      const res = await follow(browser, linkIn(mail, `${m.server.base}/verify-email`))
      expect(res.status).toBe(302)
      expect(res.headers.get('location')).toBe('/done')
      expect(res.cookies.some((c) => c.startsWith('better-auth.session_token='))).toBe(true)
      const session = await browser.get<{ user: { email: string; emailVerified: boolean } }>('/get-session')
      expect(session.body.user).toMatchObject({ email, emailVerified: true })
    } finally {
      await restore()
    }
  })
})

describe('verify-email with auto sign-in and an enrolled second factor', () => {
  it('asks the second factor and creates no session before it', async () => {
    await m.server.gatehouse.config.update({ emailVerification: { autoSignInAfterVerification: true }, twoFactor: { enabled: true } })
    try {
      const email = uniqueEmail('auto2fa')
      const { mail } = await withMail(m, email, SUBJECT, () => signUp(m.server.base, { email, callbackURL: '/done' }))
      const row = await userRow(email)
      await m.server.gatehouse.ctx.db
        .update(user)
        .set({ twoFactorEnabled: true })
        .where(eq(user.id, row?.id as string))
      const sessionsBefore = (
        await m.server.gatehouse.ctx.db
          .select()
          .from(session)
          .where(eq(session.userId, row?.id as string))
      ).length
      const res = await follow(anonymous(m.server), linkIn(mail, `${m.server.base}/verify-email`))
      expect(res.status).toBe(302)
      // Held for the second factor: the hosted page's second step, a two-factor cookie, no session token.
      const held = new URL(res.headers.get('location') as string)
      expect(`${held.pathname}?${held.searchParams}`).toBe('/api/auth/ui/sign-in?step=two-factor&methods=otp&returnTo=%2Fdone')
      expect(res.cookies.filter((c) => /^better-auth\.session_token=[^;]/.test(c))).toEqual([])
      expect(res.cookies.some((c) => /^better-auth\.two_factor=[^;]/.test(c))).toBe(true)
      expect(
        (
          await m.server.gatehouse.ctx.db
            .select()
            .from(session)
            .where(eq(session.userId, row?.id as string))
        ).length,
      ).toBe(sessionsBefore)
      expect((await userRow(email))?.emailVerified).toBe(true)
    } finally {
      await m.server.gatehouse.config.update({ twoFactor: null })
      await restore()
    }
  })
})

describe('POST /send-verification-email', () => {
  it('sends a fresh link to a known address, even when already verified', async () => {
    const { email } = await signUp(m.server.base)
    const { result, mail } = await withMail(m, email, SUBJECT, () =>
      anonymous(m.server).post('/send-verification-email', { email: email.toUpperCase(), callbackURL: '/verified' }),
    )
    expect(result.status).toBe(200)
    expect(result.body).toEqual({ status: true })
    expect(new URL(linkIn(mail, `${m.server.base}/verify-email`)).searchParams.get('callbackURL')).toBe('/verified')
  })

  it('answers an unknown address like a known one (no mail), refuses an invalid one, an untrusted callbackURL and a disabled feature', async () => {
    const client = anonymous(m.server)
    const ghost = uniqueEmail('ghost')
    const unknown = await client.post('/send-verification-email', { email: ghost })
    expect(unknown.status).toBe(200)
    expect(unknown.body).toEqual({ status: true })
    await settle(m)
    expect(mailsTo(m.sink, ghost)).toHaveLength(0)

    const invalid = await client.post<{ code: string }>('/send-verification-email', { email: 'not-an-email' })
    expect(invalid.status).toBe(400)
    expect(invalid.body).toEqual({ code: 'VALIDATION_ERROR', message: '[body.email] Invalid email address' })

    const { email } = await signUp(m.server.base)
    const untrusted = await client.post('/send-verification-email', { email, callbackURL: 'https://evil.example/x' })
    expect(untrusted.status).toBe(403)
    expect(untrusted.body).toEqual({ code: 'INVALID_CALLBACK_URL', message: 'Invalid callbackURL' })

    await m.server.gatehouse.config.update({ emailVerification: { sendVerificationEmail: false } })
    try {
      const disabled = await client.post('/send-verification-email', { email })
      expect(disabled.status).toBe(400)
      expect(disabled.body).toEqual({ code: 'VERIFICATION_EMAIL_NOT_ENABLED', message: "Verification email isn't enabled" })
    } finally {
      await restore()
    }
  })
})

describe('GET /verify-email refusals', () => {
  async function freshLink(): Promise<{ email: string; link: string }> {
    const email = uniqueEmail('refuse')
    const { mail } = await withMail(m, email, SUBJECT, () => signUp(m.server.base, { email }))
    return { email, link: linkIn(mail, `${m.server.base}/verify-email`) }
  }

  it('an expired token: token_expired on the callbackURL, or 401 without one', async () => {
    const { email, link } = await freshLink()
    m.server.clock.advanceSeconds(3601)
    const redirected = await follow(anonymous(m.server), link.replace('callbackURL=%2F', 'callbackURL=%2Fapp%3Ftab%3D1'))
    expect(redirected.status).toBe(302)
    expect(redirected.headers.get('location')).toBe('/app?tab=1&error=token_expired')
    const plain = await follow(anonymous(m.server), link.replace(/&callbackURL=.*$/, ''))
    expect(plain.status).toBe(401)
    expect(plain.body).toEqual({ code: 'TOKEN_EXPIRED', message: 'token_expired' })
    expect((await userRow(email))?.emailVerified).toBe(false)
  })

  it('a tampered or foreign-key token: invalid_token', async () => {
    const { link } = await freshLink()
    const token = new URL(link).searchParams.get('token') as string
    const tampered = `${token.slice(0, -2)}${token.endsWith('A') ? 'BB' : 'AA'}`
    const res = await anonymous(m.server).get(`/verify-email?token=${tampered}&callbackURL=/x`)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/x?error=invalid_token')
    const plain = await anonymous(m.server).get('/verify-email?token=garbage')
    expect(plain.status).toBe(401)
    expect(plain.body).toEqual({ code: 'INVALID_TOKEN', message: 'invalid_token' })
  })

  it('a token for a user who no longer exists: user_not_found', async () => {
    const { email, link } = await freshLink()
    await m.server.gatehouse.ctx.db.delete(user).where(eq(user.email, email))
    const res = await follow(anonymous(m.server), link.replace(/&callbackURL=.*$/, ''))
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ code: 'USER_NOT_FOUND', message: 'user_not_found' })
  })

  it('requires the token and refuses an untrusted callbackURL', async () => {
    const missing = await anonymous(m.server).get<{ code: string }>('/verify-email')
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({ code: 'VALIDATION_ERROR', message: '[query.token] Invalid input: expected string, received undefined' })
    const { link } = await freshLink()
    const evil = await follow(anonymous(m.server), link.replace('callbackURL=%2F', 'callbackURL=https%3A%2F%2Fevil.example%2F'))
    expect(evil.status).toBe(403)
    expect(evil.body).toEqual({ code: 'INVALID_CALLBACK_URL', message: 'Invalid callbackURL' })
  })
})

describe('requireEmailVerification', () => {
  it('signs up without a session, refuses sign-in with 403 and mails a new link; after verifying, sign-in works', async () => {
    await m.server.gatehouse.config.update({
      emailAndPassword: { requireEmailVerification: true },
      emailVerification: { sendOnSignUp: false },
    })
    try {
      const email = uniqueEmail('required')
      const client = new HttpClient(m.server.base)
      const { result: signUpRes } = await withMail(m, email, SUBJECT, () =>
        client.post<{ token: string | null }>('/sign-up/email', { name: 'R', email, password: 'password123' }),
      )
      expect(signUpRes.status).toBe(200)
      expect(signUpRes.body.token).toBeNull()
      expect(signUpRes.cookies).toEqual([])

      const { result: refused, mail } = await withMail(m, email, SUBJECT, () =>
        client.post('/sign-in/email', { email, password: 'password123', callbackURL: '/after' }),
      )
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({ code: 'EMAIL_NOT_VERIFIED', message: 'Email not verified' })
      expect(mailsTo(m.sink, email, SUBJECT)).toHaveLength(2)
      const link = linkIn(mail, `${m.server.base}/verify-email`)
      expect(new URL(link).searchParams.get('callbackURL')).toBe('/after')

      // A wrong password reveals nothing and sends nothing.
      const wrong = await client.post('/sign-in/email', { email, password: 'wrong-password' })
      expect(statusAndBody(wrong)).toEqual([401, ERRORS.INVALID_EMAIL_OR_PASSWORD])

      expect((await follow(anonymous(m.server), link)).status).toBe(302)
      const ok = await client.post<{ token: string }>('/sign-in/email', { email, password: 'password123' })
      expect(ok.status).toBe(200)
      expect(ok.body.token).toMatch(/^[A-Za-z0-9]{32}$/)
      expect(mailsTo(m.sink, email, SUBJECT)).toHaveLength(2)
    } finally {
      await restore()
    }
  })
})
