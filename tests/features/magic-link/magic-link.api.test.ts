import { magicLinkClient } from 'better-auth/client/plugins'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { account, session, user } from '../../../server/db/schema.js'
import { firstRow } from '../../../server/db/storage.js'
import { CookieJar, HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import { startTestServer } from '../../helpers/server.js'
import { anonymous, follow, linkIn, type MailServer, startMailServer, withMail } from '../../helpers/mail-flow.js'

const SUBJECT = /^Sign in to /

let m: MailServer
beforeAll(async () => {
  m = await startMailServer({ twoFactor: { enabled: true }, hostedPages: { enabled: false } })
  // Through the stored layer, so that tests can switch it live.
  await m.server.gatehouse.config.update({ magicLink: { enabled: true } })
})
afterAll(() => m.close())

function officialClient(jar = new CookieJar()) {
  return official(m.server, { jar, plugins: [magicLinkClient()] })
}

const db = () => m.server.gatehouse.ctx.db
const userRow = (email: string) => firstRow(db().select().from(user).where(eq(user.email, email)))
const sessionsOf = async (userId: string) => (await db().select().from(session).where(eq(session.userId, userId))).length

/** Asks for a link and returns it as mailed. */
async function mailedLink(email: string, body: Record<string, unknown> = {}): Promise<string> {
  const { mail, result } = await withMail(m, email, SUBJECT, () => anonymous(m.server).post('/sign-in/magic-link', { email, ...body }))
  expect(result.status).toBe(200)
  expect(result.body).toEqual({ status: true })
  return linkIn(mail, `${m.server.base}/magic-link/verify?token=`)
}

/** A user signed up with a password whose address is already verified (nothing to revoke at the first link). */
async function verifiedUser(email: string) {
  await signUp(m.server.base, { email })
  await db().update(user).set({ emailVerified: true }).where(eq(user.email, email))
  return (await userRow(email)) as NonNullable<Awaited<ReturnType<typeof userRow>>>
}

const tokenOf = (link: string) => new URL(link).searchParams.get('token') as string

describe('magic link', () => {
  it('signs up a new address through the official client: link mailed, verify answers {token, user, session}', async () => {
    const email = uniqueEmail('ml-new')
    const { client, jar } = officialClient()
    const { mail, result } = await withMail(m, email, SUBJECT, () => client.signIn.magicLink({ email, name: 'Ada' }))
    expect(result.error).toBeNull()
    expect(result.data).toEqual({ status: true })
    const link = linkIn(mail, `${m.server.base}/magic-link/verify?token=`)
    const url = new URL(link)
    expect(url.searchParams.get('token')).toMatch(/^[A-Za-z]{32}$/)
    expect(url.searchParams.get('callbackURL')).toBe('/')
    expect(await userRow(email)).toBeUndefined()

    const verified = await client.magicLink.verify({ query: { token: tokenOf(link) } })
    expect(verified.error).toBeNull()
    const data = verified.data as {
      token: string
      user: { email: string; name: string; emailVerified: boolean }
      session: { token: string }
    }
    expect(data.user).toMatchObject({ email, name: 'Ada', emailVerified: true })
    expect(data.session.token).toBe(data.token)
    expect(jar.get('better-auth.session_token')).toMatch(new RegExp(`^${data.token}\\.`))
    const current = await client.getSession()
    expect(current.data?.user.email).toBe(email)
  })

  it('redirects to callbackURL (newUserCallbackURL for a new user) with the session cookie', async () => {
    const email = uniqueEmail('ml-cb')
    const link = await mailedLink(email, { callbackURL: '/home', newUserCallbackURL: `${m.server.origin}/welcome` })
    const res = await follow(anonymous(m.server), link)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(`${m.server.origin}/welcome`)
    expect(res.cookies.some((c) => c.startsWith('better-auth.session_token='))).toBe(true)

    const again = await mailedLink(email, { callbackURL: '/home' })
    const res2 = await follow(anonymous(m.server), again)
    expect(res2.status).toBe(302)
    expect(res2.headers.get('location')).toBe(`${m.server.origin}/home`)
  })

  it('a link is used once: the second use redirects with error=INVALID_TOKEN and makes no session', async () => {
    const email = uniqueEmail('ml-once')
    const found = await verifiedUser(email)
    const before = await sessionsOf(found?.id as string)
    const link = await mailedLink(email, { callbackURL: '/app', errorCallbackURL: '/oops' })
    expect((await follow(anonymous(m.server), link)).headers.get('location')).toBe(`${m.server.origin}/app`)
    const reused = await follow(anonymous(m.server), link)
    expect(reused.status).toBe(302)
    expect(reused.headers.get('location')).toBe(`${m.server.origin}/oops?error=INVALID_TOKEN`)
    expect(reused.cookies).toEqual([])
    expect(await sessionsOf(found?.id as string)).toBe(before + 1)
  })

  it('two parallel uses of one link make exactly one session', async () => {
    const email = uniqueEmail('ml-race')
    const found = await verifiedUser(email)
    const before = await sessionsOf(found?.id as string)
    const link = await mailedLink(email)
    const answers = await Promise.all(Array.from({ length: 6 }, () => follow(anonymous(m.server), link)))
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(302))
    const locations = answers.map((a) => a.headers.get('location'))
    expect(locations.filter((l) => l === `${m.server.origin}/`)).toHaveLength(1)
    expect(locations.filter((l) => l === `${m.server.origin}/?error=INVALID_TOKEN`)).toHaveLength(5)
    expect(answers.filter((a) => a.cookies.some((c) => /^better-auth\.session_token=[^;]/.test(c)))).toHaveLength(1)
    expect(await sessionsOf(found?.id as string)).toBe(before + 1)
  })

  it('parallel uses of one link for a new address: one user, one session', async () => {
    const email = uniqueEmail('ml-race-new')
    const link = await mailedLink(email)
    const answers = await Promise.all(Array.from({ length: 6 }, () => follow(anonymous(m.server), link)))
    const locations = answers.map((a) => a.headers.get('location'))
    expect(locations.filter((l) => l === `${m.server.origin}/`)).toHaveLength(1)
    expect(locations.filter((l) => l === `${m.server.origin}/?error=INVALID_TOKEN`)).toHaveLength(5)
    const created = await userRow(email)
    expect(await sessionsOf(created?.id as string)).toBe(1)
  })

  it('an expired link (TestClock) and an unknown token are refused', async () => {
    const email = uniqueEmail('ml-exp')
    const link = await mailedLink(email)
    m.server.clock.advanceSeconds(301)
    const res = await follow(anonymous(m.server), link)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(`${m.server.origin}/?error=INVALID_TOKEN`)
    expect(await userRow(email)).toBeUndefined()
    const unknown = await anonymous(m.server).get('/magic-link/verify?token=nope&callbackURL=/x')
    expect(unknown.headers.get('location')).toBe(`${m.server.origin}/x?error=INVALID_TOKEN`)
  })

  it('refuses untrusted callback URLs when asking and when verifying', async () => {
    const email = uniqueEmail('ml-evil')
    const asked = await anonymous(m.server).post('/sign-in/magic-link', { email, callbackURL: 'https://evil.example/steal' })
    expect(asked.status).toBe(403)
    expect(asked.body).toMatchObject({ code: 'INVALID_CALLBACK_URL', message: 'Invalid callbackURL' })
    const link = await mailedLink(email)
    for (const [param, code, label] of [
      ['callbackURL', 'INVALID_CALLBACK_URL', 'callbackURL'],
      ['errorCallbackURL', 'INVALID_ERROR_CALLBACK_URL', 'errorCallbackURL'],
      ['newUserCallbackURL', 'INVALID_NEW_USER_CALLBACK_URL', 'newUserCallbackURL'],
    ]) {
      const res = await anonymous(m.server).get(
        `/magic-link/verify?token=${tokenOf(link)}&${param}=${encodeURIComponent('https://evil.example/')}`,
      )
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ code, message: `Invalid ${label}` })
    }
    // The refusals did not spend the link.
    expect((await follow(anonymous(m.server), link.replace(/&callbackURL=[^&]*/, ''))).status).toBe(200)
  })

  it('disableSignUp: a link for an unknown address redirects with new_user_signup_disabled', async () => {
    await m.server.gatehouse.config.update({ magicLink: { disableSignUp: true } })
    try {
      const email = uniqueEmail('ml-nosignup')
      const link = await mailedLink(email)
      const res = await follow(anonymous(m.server), link)
      expect(res.headers.get('location')).toBe(`${m.server.origin}/?error=new_user_signup_disabled`)
      expect(await userRow(email)).toBeUndefined()
    } finally {
      await m.server.gatehouse.config.update({ magicLink: { disableSignUp: false } })
    }
  })

  it('goes through the sign-in pipeline: a banned user is refused and audited', async () => {
    const email = uniqueEmail('ml-banned')
    const found = await verifiedUser(email)
    await db()
      .update(user)
      .set({ banned: true, banReason: 'spam' })
      .where(eq(user.id, found?.id as string))
    const before = await sessionsOf(found?.id as string)
    const link = await mailedLink(email, { callbackURL: '/app' })
    const res = await follow(anonymous(m.server), link)
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('location') as string)
    expect(location.searchParams.get('error')).toBe('BANNED_USER')
    expect(res.cookies.filter((c) => c.startsWith('better-auth.session_token='))).toEqual([])
    expect(await sessionsOf(found?.id as string)).toBe(before)
  })

  it('an enrolled second factor is asked for: the answer is the challenge, no session', async () => {
    const email = uniqueEmail('ml-2fa')
    const found = await verifiedUser(email)
    await db()
      .update(user)
      .set({ twoFactorEnabled: true })
      .where(eq(user.id, found?.id as string))
    const before = await sessionsOf(found?.id as string)
    const link = await mailedLink(email)
    const res = await follow(anonymous(m.server), link.replace(/&callbackURL=[^&]*/, ''))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ twoFactorRedirect: true })
    expect(res.cookies.some((c) => c.startsWith('better-auth.two_factor='))).toBe(true)
    expect(res.cookies.some((c) => /^better-auth\.session_token=[^;]/.test(c))).toBe(false)
    expect(await sessionsOf(found?.id as string)).toBe(before)
    // With a callbackURL and no hosted pages: the error callback says a second factor is required.
    const second = await mailedLink(email, { callbackURL: '/app' })
    const redirected = await follow(anonymous(m.server), second)
    expect(redirected.headers.get('location')).toBe(`${m.server.origin}/app?error=two_factor_required`)
  })

  it('an unverified account under requireEmailVerification is admitted by the link, which proves the address; unproven access is revoked', async () => {
    await m.server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: true } })
    try {
      const email = uniqueEmail('ml-unverified')
      await signUp(m.server.base, { email })
      const found = await userRow(email)
      expect(found?.emailVerified).toBe(false)
      // Refused by the password sign-in while unverified.
      const refused = await new HttpClient(m.server.base).post('/sign-in/email', { email, password: 'correct horse battery' })
      expect(refused.body).toMatchObject({ code: 'EMAIL_NOT_VERIFIED' })
      const link = await mailedLink(email)
      const res = await follow<{ user: { emailVerified: boolean } }>(anonymous(m.server), link.replace(/&callbackURL=[^&]*/, ''))
      expect(res.status).toBe(200)
      expect(res.body.user.emailVerified).toBe(true)
      expect((await userRow(email))?.emailVerified).toBe(true)
      // The password set before the address was proven is gone (better-auth's revokeUnprovenAccountAccess).
      expect(
        await db()
          .select()
          .from(account)
          .where(eq(account.userId, found?.id as string)),
      ).toEqual([])
    } finally {
      await m.server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: false } })
    }
  })

  it('answers 404 while switched off', async () => {
    await m.server.gatehouse.config.update({ magicLink: { enabled: false } })
    try {
      const res = await anonymous(m.server).post('/sign-in/magic-link', { email: uniqueEmail('off') })
      expect(res.status).toBe(404)
    } finally {
      await m.server.gatehouse.config.update({ magicLink: { enabled: true } })
    }
  })
})

describe('the plugins rate-limit rules', () => {
  it('/sign-in/magic-link allows 5 per 60 s (the plugin rule, not the strict 3 per 10 s of /sign-in); /sign-in/email-otp 3 per 60 s', async () => {
    const server = await startTestServer({
      config: { rateLimit: { enabled: true }, magicLink: { enabled: true }, emailOTP: { enabled: true } },
    })
    try {
      const client = new HttpClient(server.base)
      const email = uniqueEmail('ml-rate')
      const statuses: number[] = []
      for (let i = 0; i < 6; i++) statuses.push((await client.post('/sign-in/magic-link', { email })).status)
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
      // Still limited after the strict rule's 10 s window: the plugin's window is 60 s.
      server.clock.advanceSeconds(30)
      expect((await client.post('/sign-in/magic-link', { email })).status).toBe(429)
      server.clock.advanceSeconds(31)
      expect((await client.post('/sign-in/magic-link', { email })).status).toBe(200)

      const otp: number[] = []
      for (let i = 0; i < 4; i++) otp.push((await client.post('/sign-in/email-otp', { email, otp: '000000' })).status)
      expect(otp).toEqual([400, 400, 400, 429])
      server.clock.advanceSeconds(30)
      expect((await client.post('/sign-in/email-otp', { email, otp: '000000' })).status).toBe(429)
    } finally {
      await server.close()
    }
  })
})
