import { anonymousClient, emailOTPClient, magicLinkClient } from 'better-auth/client/plugins'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, session, user } from '../../../server/db/schema.js'
import { firstRow } from '../../../server/db/storage.js'
import { CookieJar, HttpClient, signUp, statusAndBody, uniqueEmail } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { metricsListening } from '../../../server/features/metrics/index.js'
import { scrape } from '../../helpers/metrics.js'
import { linkIn, type MailServer, startMailServer, withMail } from '../../helpers/mail-flow.js'

/**
 * Anonymous users (issue 27, better-auth's anonymous plugin): POST /sign-in/anonymous through the
 * sign-in pipeline, user.isAnonymous, POST /delete-anonymous-user, and link-and-remove: a person
 * carrying an anonymous session who signs up or in another way leaves no anonymous user behind.
 */

const CANNOT_AGAIN = {
  code: 'ANONYMOUS_USERS_CANNOT_SIGN_IN_AGAIN_ANONYMOUSLY',
  message: 'Anonymous users cannot sign in again anonymously',
}
const PLACEHOLDER = /^[A-Za-z0-9]{32}@anonymous\.placeholder\.invalid$/

let m: MailServer
let server: TestServer
beforeAll(async () => {
  m = await startMailServer({ hostedPages: { enabled: false } })
  server = m.server
  await server.gatehouse.config.update({ anonymous: { enabled: true }, magicLink: { enabled: true }, emailOTP: { enabled: true } })
})
afterAll(() => m.close())

const db = () => server.gatehouse.ctx.db
const userById = (id: string) => firstRow(db().select().from(user).where(eq(user.id, id)))
const sessionsOf = async (userId: string) => (await db().select().from(session).where(eq(session.userId, userId))).length

function officialClient(jar = new CookieJar()) {
  return official(server, { jar, plugins: [anonymousClient(), magicLinkClient(), emailOTPClient()] })
}

interface SignedInAnonymously {
  token: string
  user: { id: string; email: string; name: string; emailVerified: boolean; isAnonymous: boolean }
}

/** An anonymous sign-in by raw HTTP; the client keeps its cookie. */
async function anonymousHttp(): Promise<{ client: HttpClient; body: SignedInAnonymously }> {
  const client = new HttpClient(server.base)
  const res = await client.post<SignedInAnonymously>('/sign-in/anonymous')
  expect(res.status, res.text).toBe(200)
  return { client, body: res.body }
}

describe('anonymous sign-in', () => {
  it('the official client signs in anonymously: {token, user} with isAnonymous, a generated address, the session cookie', async () => {
    const { client, jar } = officialClient()
    const result = await client.signIn.anonymous()
    expect(result.error).toBeNull()
    const data = result.data as SignedInAnonymously
    expect(Object.keys(data).sort()).toEqual(['token', 'user'])
    expect(data.user).toMatchObject({ name: 'Anonymous', emailVerified: false, isAnonymous: true, image: null })
    expect(data.user.email).toMatch(PLACEHOLDER)
    expect(jar.get('better-auth.session_token')).toMatch(new RegExp(`^${data.token}\\.`))
    const current = await client.getSession()
    expect(current.data?.user).toMatchObject({ id: data.user.id, isAnonymous: true })
    expect(await userById(data.user.id)).toMatchObject({ isAnonymous: true, emailVerified: false })
    const events = await db().select().from(auditEvent).where(eq(auditEvent.targetUserId, data.user.id))
    expect(events.map((e) => [e.type, e.detail])).toEqual([
      ['user.sign-up', { method: 'anonymous' }],
      ['user.sign-in', { method: 'anonymous' }],
    ])
  })

  it('refuses a second anonymous sign-in from an anonymous session (400), and leaves the first user alone', async () => {
    const { client, body } = await anonymousHttp()
    const again = await client.post('/sign-in/anonymous')
    expect(statusAndBody(again)).toEqual([400, CANNOT_AGAIN])
    expect(again.cookies).toEqual([])
    expect(await sessionsOf(body.user.id)).toBe(1)
    // The official client gets the same refusal.
    const { client: official } = officialClient()
    expect((await official.signIn.anonymous()).error).toBeNull()
    const refused = await official.signIn.anonymous()
    expect(refused.error).toMatchObject({ status: 400, ...CANNOT_AGAIN })
  })

  it('a signed-in ordinary user may sign in anonymously (a new user; the ordinary one stays)', async () => {
    const ordinary = await signUp(server.base)
    const res = await ordinary.client.post<SignedInAnonymously>('/sign-in/anonymous')
    expect(res.status).toBe(200)
    expect(res.body.user.isAnonymous).toBe(true)
    expect(res.body.user.id).not.toBe(ordinary.user.id)
    expect(await userById(ordinary.user.id)).toBeDefined()
  })

  it('users made while the feature is on carry isAnonymous: false', async () => {
    const ordinary = await signUp(server.base)
    expect(ordinary.user).toMatchObject({ isAnonymous: false })
    expect((await ordinary.client.get<{ user: Record<string, unknown> }>('/get-session')).body.user.isAnonymous).toBe(false)
  })

  it('ignores requireEmailVerification (an anonymous address has nothing to verify), as better-auth', async () => {
    await server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: true } })
    try {
      const { body } = await anonymousHttp()
      expect(body.user.emailVerified).toBe(false)
    } finally {
      await server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: null } })
    }
  })

  it('emailDomainName: addresses are temp-{id}@{domain}', async () => {
    await server.gatehouse.config.update({ anonymous: { emailDomainName: 'guests.example.com' } })
    try {
      const { body } = await anonymousHttp()
      expect(body.user.email).toMatch(/^temp-[a-z0-9]{32}@guests\.example\.com$/)
    } finally {
      await server.gatehouse.config.update({ anonymous: { emailDomainName: null } })
    }
  })
})

describe('link and remove', () => {
  it('signing up by email from an anonymous session (official client) removes the anonymous user after the new session exists', async () => {
    const { client, jar } = officialClient()
    const anon = (await client.signIn.anonymous()).data as SignedInAnonymously
    const email = uniqueEmail('linked')
    const signedUp = await client.signUp.email({ email, password: 'correct horse battery', name: 'Linked' })
    expect(signedUp.error).toBeNull()
    expect(signedUp.data?.user).toMatchObject({ email, isAnonymous: false })
    expect(await userById(anon.user.id)).toBeUndefined()
    expect(await sessionsOf(anon.user.id)).toBe(0)
    const current = await client.getSession()
    expect(current.data?.user.email).toBe(email)
    expect(jar.get('better-auth.session_token')).toMatch(new RegExp(`^${signedUp.data?.token}\\.`))
    const [linked] = await db().select().from(auditEvent).where(eq(auditEvent.type, 'user.anonymous-linked')).orderBy(auditEvent.id)
    expect(linked).toBeDefined()
  })

  it('signing in to an existing account by password removes the anonymous user', async () => {
    const existing = await signUp(server.base)
    const { client, body } = await anonymousHttp()
    const res = await client.post<{ user: { id: string } }>('/sign-in/email', { email: existing.email, password: existing.password })
    expect(res.status).toBe(200)
    expect(res.body.user.id).toBe(existing.user.id)
    expect(await userById(body.user.id)).toBeUndefined()
  })

  it('a bearer anonymous session is linked too (Authorization header)', async () => {
    const existing = await signUp(server.base)
    const { body } = await anonymousHttp()
    const res = await new HttpClient(server.base).post(
      '/sign-in/email',
      { email: existing.email, password: existing.password },
      { authorization: `Bearer ${body.token}` },
    )
    expect(res.status).toBe(200)
    expect(await userById(body.user.id)).toBeUndefined()
  })

  it('a magic link followed in the anonymous browser removes the anonymous user (official client)', async () => {
    const { client } = officialClient()
    const anon = (await client.signIn.anonymous()).data as SignedInAnonymously
    const email = uniqueEmail('ml-anon')
    const { mail } = await withMail(m, email, /^Sign in to /, () => client.signIn.magicLink({ email }))
    const token = new URL(linkIn(mail, `${server.base}/magic-link/verify?token=`)).searchParams.get('token') as string
    const verified = await client.magicLink.verify({ query: { token } })
    expect(verified.error).toBeNull()
    expect(await userById(anon.user.id)).toBeUndefined()
    expect((await client.getSession()).data?.user.email).toBe(email)
  })

  it('an email code entered in the anonymous browser removes the anonymous user (official client)', async () => {
    const { client } = officialClient()
    const anon = (await client.signIn.anonymous()).data as SignedInAnonymously
    const email = uniqueEmail('otp-anon')
    const { mail } = await withMail(m, email, /sign-in code/, () => client.emailOtp.sendVerificationOtp({ email, type: 'sign-in' }))
    const otp = (mail.subject.match(/: (\d+)$/) as RegExpMatchArray)[1] as string
    const signedIn = await client.signIn.emailOtp({ email, otp })
    expect(signedIn.error).toBeNull()
    expect(signedIn.data?.user).toMatchObject({ email, isAnonymous: false })
    expect(await userById(anon.user.id)).toBeUndefined()
  })

  it('a sign-up that makes no session (requireEmailVerification) keeps the anonymous user and its session', async () => {
    const { client, body } = await anonymousHttp()
    await server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: true } })
    try {
      const res = await client.post<{ token: string | null }>('/sign-up/email', {
        email: uniqueEmail('unverified'),
        password: 'correct horse battery',
        name: 'U',
      })
      expect(res.status).toBe(200)
      expect(res.body.token).toBeNull()
    } finally {
      await server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: null } })
    }
    expect(await userById(body.user.id)).toBeDefined()
    expect(await sessionsOf(body.user.id)).toBe(1)
  })

  it('a refused sign-in (wrong password) keeps the anonymous user', async () => {
    const existing = await signUp(server.base)
    const { client, body } = await anonymousHttp()
    const res = await client.post('/sign-in/email', { email: existing.email, password: 'wrong password here' })
    expect(res.status).toBe(401)
    expect(await userById(body.user.id)).toBeDefined()
  })

  it('disableDeleteAnonymousUser keeps the anonymous user after a sign-up, and refuses delete-anonymous-user', async () => {
    await server.gatehouse.config.update({ anonymous: { disableDeleteAnonymousUser: true } })
    try {
      const { client, body } = await anonymousHttp()
      const deleting = await client.post('/delete-anonymous-user')
      expect(statusAndBody(deleting)).toEqual([
        400,
        { code: 'DELETE_ANONYMOUS_USER_DISABLED', message: 'Deleting anonymous users is disabled' },
      ])
      const res = await client.post('/sign-up/email', { email: uniqueEmail('kept'), password: 'correct horse battery', name: 'K' })
      expect(res.status).toBe(200)
      expect(await userById(body.user.id)).toMatchObject({ isAnonymous: true })
    } finally {
      await server.gatehouse.config.update({ anonymous: { disableDeleteAnonymousUser: null } })
    }
  })
})

describe('POST /delete-anonymous-user', () => {
  it('the official client deletes its anonymous user: {success: true}, its sessions and cookies gone', async () => {
    const { client, jar } = officialClient()
    const anon = (await client.signIn.anonymous()).data as SignedInAnonymously
    const deleted = await client.deleteAnonymousUser()
    expect(deleted.error).toBeNull()
    expect(deleted.data).toEqual({ success: true })
    expect(jar.get('better-auth.session_token')).toBeUndefined()
    expect(await userById(anon.user.id)).toBeUndefined()
    expect(await sessionsOf(anon.user.id)).toBe(0)
  })

  it('refuses an ordinary user (403 USER_IS_NOT_ANONYMOUS) and a request without a session (401)', async () => {
    const ordinary = await signUp(server.base)
    expect(statusAndBody(await ordinary.client.post('/delete-anonymous-user'))).toEqual([
      403,
      { code: 'USER_IS_NOT_ANONYMOUS', message: 'User is not anonymous' },
    ])
    expect(await userById(ordinary.user.id)).toBeDefined()
    expect(statusAndBody(await new HttpClient(server.base).post('/delete-anonymous-user'))).toEqual([
      401,
      { code: 'UNAUTHORIZED', message: 'Unauthorized' },
    ])
  })
})

describe('metrics', () => {
  it('counts anonymous sign-ins under their own method, refusals included', async () => {
    const watched = await startTestServer({ config: { anonymous: { enabled: true }, metrics: { enabled: true, address: '127.0.0.1:0' } } })
    try {
      const at = await metricsListening(watched.gatehouse.ctx)
      if (!at) throw new Error('the metrics listener did not start')
      const url = `http://127.0.0.1:${at.port}/metrics`
      const before = await scrape(url)
      const client = new HttpClient(watched.base)
      expect((await client.post('/sign-in/anonymous')).status).toBe(200)
      expect((await client.post('/sign-in/anonymous')).status).toBe(400)
      const after = await scrape(url)
      const delta = (outcome: string) =>
        after.value('gatehouse_sign_ins_total', { method: 'anonymous', outcome }) -
        before.value('gatehouse_sign_ins_total', { method: 'anonymous', outcome })
      expect([delta('success'), delta('refused')]).toEqual([1, 1])
    } finally {
      await watched.close()
    }
  })
})

describe('anonymous.enabled off', () => {
  it('the endpoints answer 404 and users carry no isAnonymous', async () => {
    const off = await startTestServer()
    try {
      const client = new HttpClient(off.base)
      expect((await client.post('/sign-in/anonymous')).status).toBe(404)
      expect((await client.post('/delete-anonymous-user')).status).toBe(404)
      const ordinary = await signUp(off.base)
      expect(ordinary.user).not.toHaveProperty('isAnonymous')
    } finally {
      await off.close()
    }
  })
})
