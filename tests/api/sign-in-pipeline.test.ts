import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, loginThrottle, passkey, session, user, verification } from '../../server/db/schema.js'
import { otpIdentifier, replaceOTP } from '../../server/features/email-otp/store.js'
import { magicLinkIdentifier, storeMagicLink } from '../../server/features/magic-link/store.js'
import { type BrowserPanel, startBrowserPanel } from '../../server/panel/index.js'
import { HttpClient, uniqueEmail } from '../helpers/http.js'
import { administrator } from '../helpers/members.js'
import { FakeOidc } from '../helpers/fake-oidc.js'
import { Browser, createSigningKey, FakeProvider, type RecordedRequest, type SigningKey } from '../helpers/oauth-fakes.js'
import { silentLogger, startTestServer, type TestServer } from '../helpers/server.js'
import { type TOTP, URI } from 'otpauth'

/**
 * The sign-in pipeline's shared rules, once per method (issue 26): every way in is refused or
 * challenged the same way for a banned user, an unverified one under requireEmailVerification, a
 * locked account and an enrolled second factor, and none of them leaves a session behind. A new
 * method is one row of METHODS. A one-time token is not a sign-in (it hands over the session it
 * was issued for, as better-auth's verify does): its own table below says so.
 */

const PASSWORD = 'correct horse battery'
const GITHUB = { clientId: 'gh-client', clientSecret: 'gh-secret' }

let server: TestServer
const fake = new FakeProvider()
/** An OpenID provider configured under genericOAuth.config (discovery, JWKS, nonce, PKCE). */
const oidc = new FakeOidc('generic-client', 'generic-secret')
let appleKey: SigningKey
/** GitHub's answer for the next callback: which account the provider says signed in. */
let githubUser = { id: 1, email: 'nobody@example.com' }

beforeAll(async () => {
  await fake.start()
  await oidc.start()
  let tokens = 0
  fake.on('POST', '/gh/token', (req: RecordedRequest) =>
    req.form.get('client_secret') === GITHUB.clientSecret
      ? { json: { access_token: `access-${++tokens}`, token_type: 'bearer', expires_in: 3600, scope: 'read:user,user:email' } }
      : { status: 401, json: { error: 'invalid_client' } },
  )
  fake.on('GET', '/gh/user', () => ({
    json: { login: `user${githubUser.id}`, id: githubUser.id, name: `User ${githubUser.id}`, email: null },
  }))
  fake.on('GET', '/gh/emails', () => ({ json: [{ email: githubUser.email, verified: true, primary: true }] }))
  fake.on('GET', '/apple/keys', () => ({ json: { keys: [appleKey.publicJwk] } }))
  appleKey = await createSigningKey('RS256')
  server = await startTestServer({
    config: {
      passkey: { enabled: true },
      twoFactor: { enabled: true },
      genericOAuth: {
        config: [
          {
            providerId: 'corp',
            discoveryUrl: oidc.discoveryUrl,
            clientId: 'generic-client',
            clientSecret: 'generic-secret',
            scopes: ['email'],
          },
        ],
      },
      deviceAuthorization: { enabled: true },
      anonymous: { enabled: true },
      magicLink: { enabled: true },
      emailOTP: { enabled: true },
      oneTimeToken: { enabled: true },
      socialProviders: {
        github: {
          ...GITHUB,
          endpoints: {
            authorization: `${fake.url}/gh/authorize`,
            token: `${fake.url}/gh/token`,
            userInfo: `${fake.url}/gh/user`,
            emails: `${fake.url}/gh/emails`,
          },
        },
        apple: {
          clientId: 'com.example.web',
          clientSecret: 'apple-jwt',
          appBundleIdentifier: 'com.example.app',
          endpoints: { jwks: `${fake.url}/apple/keys` },
        },
      },
    },
  })
})
/** The control panel's listener: its sign-in page calls the API's sign-in endpoints through /panel/auth/. */
let panel: BrowserPanel
const panelAssets = mkdtempSync(join(tmpdir(), 'gatehouse-pipeline-panel-'))
beforeAll(async () => {
  panel = await startBrowserPanel(server.gatehouse, { port: 0, assetsDir: panelAssets, buildOnDemand: false, logger: silentLogger })
})
afterAll(async () => {
  await panel?.close()
  rmSync(panelAssets, { recursive: true, force: true })
  await server?.close()
  await fake.close()
  await oidc.close()
})

const db = () => server.gatehouse.ctx.db

/** The sign-in metric as the pipeline reports it (ctx.events.signIn), recorded from the last reset. */
const reported: Array<[string, string]> = []
beforeAll(() => {
  const ctx = server.gatehouse.ctx
  const events = ctx.events
  ctx.events = {
    ...events,
    signIn: (method, outcome) => {
      reported.push([method, outcome])
      events.signIn(method, outcome)
    },
  }
})

/** How a sign-in attempt ended, the same words for every method. */
type Outcome = { kind: 'session' } | { kind: 'second-factor' } | { kind: 'refused'; code: string }

interface Method {
  name: string
  /** Its name in the audit log and the sign-in metric (`user.sign-in` detail.method, gatehouse_sign_ins_total's method). */
  metric: string
  /** Makes a user who can sign in this way; returns its id. `carry`: cookies the sign-in's client already holds. */
  prepare(): Promise<{ userId: string; signIn: (carry?: Cookies) => Promise<Outcome> }>
  /** Whether an enrolled second factor is asked for after this method (a passkey is two factors itself). */
  asksSecondFactor: boolean
  /**
   * False for a method whose session goes to another client than the one asking (device
   * authorization: the device gets it, not the browser that may hold an anonymous session), so
   * there is no anonymous session of its own to link and remove.
   */
  linksAnonymous?: false
  /**
   * The method proves the address (a mailed link or code): an unverified user is verified by it and
   * signed in, even while requireEmailVerification is on, rather than refused.
   */
  provesEmail?: true
}

/** Cookies a client holds before it signs in (an anonymous session's). */
type Cookies = ReadonlyMap<string, string>

/**
 * The session token the last sign-in's answer handed to its client: its session cookie's (a
 * signed `token.signature`), or the body's where the session goes to another device. Undefined
 * when the answer set none.
 */
let handedOver: () => string | undefined = () => undefined

/** The token in a signed session cookie's value. */
const tokenOfCookie = (value: string | undefined) => (value ? decodeURIComponent(value).split('.')[0] : undefined)

/** A client that starts with `carry`'s cookies; the session cookie it ends with is what the answer handed over. */
function carrying<T extends HttpClient | Browser>(client: T, carry?: Cookies): T {
  const jar = client instanceof HttpClient ? client.jar : client.jar(server.origin)
  for (const [name, value] of carry ?? []) jar.cookies.set(name, value)
  handedOver = () => tokenOfCookie(jar.cookies.get('better-auth.session_token'))
  return client
}

/** A JSON sign-in answer in the table's words. */
async function fromJson(res: { status: number; body: unknown }): Promise<Outcome> {
  const body = res.body as { token?: string; twoFactorRedirect?: boolean; code?: string; session?: unknown }
  if (res.status === 200 && body.twoFactorRedirect === true) return { kind: 'second-factor' }
  if (res.status === 200 && (body.token || body.session)) return { kind: 'session' }
  return { kind: 'refused', code: `${res.status} ${body.code}` }
}

/** A provider callback's redirect in the table's words (better-auth's callback error codes). */
function fromCallback(location: string): Outcome {
  const url = new URL(location)
  if (url.pathname.endsWith('/ui/sign-in') && url.searchParams.get('step') === 'two-factor') return { kind: 'second-factor' }
  const error = url.searchParams.get('error')
  if (!error) return { kind: 'session' }
  const asJson: Record<string, string> = {
    banned: '403 BANNED_USER',
    email_not_verified: '403 EMAIL_NOT_VERIFIED',
    too_many_requests: '429 TOO_MANY_REQUESTS',
  }
  return { kind: 'refused', code: asJson[error] ?? error }
}

/** A followed magic link's answer: JSON for a session or a challenge, a redirect with `?error=` for a refusal. */
async function fromMagicLink(res: { status: number; headers: Headers; body: unknown }): Promise<Outcome> {
  if (res.status !== 302) return fromJson(res)
  const code = new URL(res.headers.get('location') as string).searchParams.get('error') ?? ''
  const status: Record<string, number> = { BANNED_USER: 403, EMAIL_NOT_VERIFIED: 403, TOO_MANY_REQUESTS: 429 }
  return { kind: 'refused', code: `${status[code] ?? res.status} ${code}` }
}

async function signUpUser(extra: Record<string, unknown> = {}) {
  const email = uniqueEmail('pipeline')
  const res = await new HttpClient(server.base).post<{ user: { id: string } }>('/sign-up/email', {
    name: 'Pipeline',
    email,
    password: PASSWORD,
    ...extra,
  })
  expect(res.status).toBe(200)
  return { email, userId: res.body.user.id }
}

/**
 * A user whose address is verified: a mailed link or code reaching an unverified one first ends
 * the access nobody proved (its sessions and accounts, better-auth's revokeUnprovenAccountAccess).
 */
async function verifiedUser() {
  const created = await signUpUser()
  await db().update(user).set({ emailVerified: true }).where(eq(user.id, created.userId))
  return created
}

// ------------------------------------------------------------------ a software authenticator

/** A P-256 credential as a platform authenticator holds it, and its assertions. */
function softwarePasskey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const jwk = publicKey.export({ format: 'jwk' })
  const x = Buffer.from(jwk.x as string, 'base64url')
  const y = Buffer.from(jwk.y as string, 'base64url')
  // COSE_Key {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y} in CBOR.
  const cose = Buffer.concat([
    Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]),
    x,
    Buffer.from([0x22, 0x58, 0x20]),
    y,
  ])
  const credentialId = randomBytes(16).toString('base64url')
  let counter = 0
  return {
    credentialId,
    publicKey: cose.toString('base64'),
    assertion(challenge: string, origin: string, rpId: string) {
      const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin, crossOrigin: false }))
      const count = Buffer.alloc(4)
      count.writeUInt32BE(++counter)
      // rpIdHash, flags (user present + user verified), signature counter.
      const authenticatorData = Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([0x05]), count])
      const signed = Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()])
      return {
        id: credentialId,
        rawId: credentialId,
        type: 'public-key',
        response: {
          clientDataJSON: clientDataJSON.toString('base64url'),
          authenticatorData: authenticatorData.toString('base64url'),
          signature: sign('sha256', signed, privateKey).toString('base64url'),
        },
        clientExtensionResults: {},
      }
    },
  }
}

// ------------------------------------------------------------------ the methods

const METHODS: Method[] = [
  {
    name: 'email and password',
    metric: 'email',
    asksSecondFactor: true,
    async prepare() {
      const { email, userId } = await signUpUser()
      return {
        userId,
        signIn: async (carry) =>
          fromJson(await carrying(new HttpClient(server.base), carry).post('/sign-in/email', { email, password: PASSWORD })),
      }
    },
  },
  {
    name: 'username and password',
    metric: 'username',
    asksSecondFactor: true,
    async prepare() {
      const username = `pipe_${randomBytes(4).toString('hex')}`
      const { userId } = await signUpUser({ username })
      return {
        userId,
        signIn: async (carry) =>
          fromJson(await carrying(new HttpClient(server.base), carry).post('/sign-in/username', { username, password: PASSWORD })),
      }
    },
  },
  {
    name: 'social provider (authorization code callback)',
    metric: 'social',
    asksSecondFactor: true,
    async prepare() {
      const account = { id: Math.floor(Math.random() * 1e9), email: uniqueEmail('gh') }
      const signIn = async (carry?: Cookies): Promise<Outcome> => {
        githubUser = account
        const browser = carrying(new Browser(), carry)
        const start = await browser.postJson(`${server.base}/sign-in/social`, { provider: 'github', callbackURL: '/done' }, server.origin)
        expect(start.status).toBe(200)
        const state = new URL(((await start.json()) as { url: string }).url).searchParams.get('state') as string
        const res = await browser.request(`${server.base}/callback/github?code=good-code&state=${state}`)
        expect(res.status).toBe(302)
        return fromCallback(new URL(res.headers.get('location') as string, server.base).href)
      }
      expect(await signIn()).toEqual({ kind: 'session' })
      const created = await db().select().from(user).where(eq(user.email, account.email))
      return { userId: created[0]?.id as string, signIn }
    },
  },
  {
    name: 'generic OAuth provider (OpenID discovery, callback)',
    metric: 'social',
    asksSecondFactor: true,
    async prepare() {
      oidc.now = () => server.clock.now()
      const account = { sub: `corp-${randomBytes(6).toString('hex')}`, email: uniqueEmail('corp'), email_verified: true, name: 'Corp' }
      const signIn = async (carry?: Cookies): Promise<Outcome> => {
        oidc.user = account
        const browser = carrying(new Browser(), carry)
        const start = await browser.postJson(`${server.base}/sign-in/social`, { provider: 'corp', callbackURL: '/done' }, server.origin)
        expect(start.status).toBe(200)
        const back = await oidc.authorizeRedirect(((await start.json()) as { url: string }).url)
        const res = await browser.request(back.toString())
        expect(res.status).toBe(302)
        return fromCallback(new URL(res.headers.get('location') as string, server.base).href)
      }
      expect(await signIn()).toEqual({ kind: 'session' })
      const created = await db().select().from(user).where(eq(user.email, account.email))
      return { userId: created[0]?.id as string, signIn }
    },
  },
  {
    name: 'social provider (ID token)',
    metric: 'social',
    asksSecondFactor: true,
    async prepare() {
      const claims = {
        iss: 'https://appleid.apple.com',
        aud: 'com.example.app',
        sub: randomBytes(6).toString('hex'),
        email: uniqueEmail('apple'),
      }
      const signIn = async (carry?: Cookies): Promise<Outcome> => {
        const token = await appleKey.sign({ ...claims, email_verified: 'true' }, { issuedAt: Math.floor(server.clock.now() / 1000) })
        const res = await carrying(new Browser(), carry).postJson(
          `${server.base}/sign-in/social`,
          { provider: 'apple', idToken: { token } },
          server.origin,
        )
        return fromJson({ status: res.status, body: await res.json() })
      }
      expect(await signIn()).toEqual({ kind: 'session' })
      const created = await db().select().from(user).where(eq(user.email, claims.email))
      return { userId: created[0]?.id as string, signIn }
    },
  },
  {
    name: 'passkey',
    metric: 'passkey',
    asksSecondFactor: false,
    async prepare() {
      const { userId } = await signUpUser()
      const key = softwarePasskey()
      await db()
        .insert(passkey)
        .values({
          id: randomBytes(8).toString('hex'),
          name: 'Laptop',
          publicKey: key.publicKey,
          userId,
          credentialID: key.credentialId,
          counter: 0,
          deviceType: 'singleDevice',
          backedUp: false,
          transports: 'internal',
          createdAt: new Date(server.clock.now()),
        })
      const signIn = async (carry?: Cookies): Promise<Outcome> => {
        const client = carrying(new HttpClient(server.base), carry)
        const options = await client.get<{ challenge: string; rpId: string }>('/passkey/generate-authenticate-options')
        const response = key.assertion(options.body.challenge, server.origin, options.body.rpId)
        return fromJson(await client.post('/passkey/verify-authentication', { response }))
      }
      return { userId, signIn }
    },
  },
  {
    // The device's session comes from an approval made in a full session of the same person (which
    // passed any enrolled second factor when it was signed in): no second factor is asked again.
    name: 'device authorization (RFC 8628 token exchange)',
    metric: 'device-authorization',
    asksSecondFactor: false,
    linksAnonymous: false,
    async prepare() {
      const { email, userId } = await signUpUser()
      const person = new HttpClient(server.base)
      expect((await person.post('/sign-in/email', { email, password: PASSWORD })).status).toBe(200)
      const device = new HttpClient(server.base, { origin: null })
      const code = await device.post<{ device_code: string; user_code: string }>('/device/code', { client_id: 'pipeline-cli' })
      expect(code.status).toBe(200)
      expect((await person.get(`/device?user_code=${code.body.user_code}`)).status).toBe(200)
      expect((await person.post('/device/approve', { userCode: code.body.user_code })).status).toBe(200)
      const signIn = async (): Promise<Outcome> => {
        const res = await device.post<{ access_token?: string; code?: string }>('/device/token', {
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          device_code: code.body.device_code,
          client_id: 'pipeline-cli',
        })
        handedOver = () => res.body.access_token
        if (res.status === 200 && res.body.access_token) return { kind: 'session' }
        return { kind: 'refused', code: `${res.status} ${res.body.code}` }
      }
      return { userId, signIn }
    },
  },
  {
    name: 'magic link (followed link, JSON answer)',
    metric: 'magic-link',
    asksSecondFactor: true,
    provesEmail: true,
    async prepare() {
      const { email, userId } = await verifiedUser()
      const signIn = async (carry?: Cookies): Promise<Outcome> => {
        // A link as POST /sign-in/magic-link stores and mails it (the mail itself is magic-link.api.test.ts's).
        const token = randomBytes(16).toString('hex')
        await storeMagicLink(server.gatehouse.ctx, token, JSON.stringify({ type: 'magic-link', email }), 300)
        const res = await carrying(new HttpClient(server.base), carry).get(`/magic-link/verify?token=${token}`)
        const outcome = await fromMagicLink(res)
        // The link is spent whatever the outcome: with the session, or alone when refused or challenged.
        expect(
          await db()
            .select()
            .from(verification)
            .where(eq(verification.identifier, magicLinkIdentifier(token))),
        ).toEqual([])
        return outcome
      }
      return { userId, signIn }
    },
  },
  {
    name: 'email OTP (POST /sign-in/email-otp)',
    metric: 'email-otp',
    asksSecondFactor: true,
    provesEmail: true,
    async prepare() {
      const { email, userId } = await verifiedUser()
      const signIn = async (carry?: Cookies): Promise<Outcome> => {
        // A code as POST /email-otp/send-verification-otp stores it (`<code>:<wrong guesses>`).
        const otp = String(100000 + (randomBytes(3).readUIntBE(0, 3) % 900000))
        const identifier = otpIdentifier('sign-in', email.toLowerCase())
        await replaceOTP(server.gatehouse.ctx, identifier, `${otp}:0`, new Date(server.clock.now() + 300_000))
        const outcome = await fromJson(await carrying(new HttpClient(server.base), carry).post('/sign-in/email-otp', { email, otp }))
        expect(await db().select().from(verification).where(eq(verification.identifier, identifier))).toEqual([])
        return outcome
      }
      return { userId, signIn }
    },
  },
  {
    // The control panel's sign-in page: the API's own endpoint, relayed by the panel's listener
    // (server/panel/auth.ts), so every rule holds there too. Its cookies are the panel's own, never
    // an app's anonymous session on the API's origin: nothing to link.
    name: 'control panel (email and password through /panel/auth/)',
    metric: 'email',
    asksSecondFactor: true,
    linksAnonymous: false,
    async prepare() {
      const { email, userId } = await signUpUser()
      const signIn = async (): Promise<Outcome> => {
        const res = await fetch(`${panel.origin}/panel/auth/sign-in/email`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: panel.origin },
          body: JSON.stringify({ email, password: PASSWORD }),
        })
        const outcome = await fromJson({ status: res.status, body: await res.json() })
        // The session's cookie comes back under the panel's own name (`<panel cookie>.<API cookie name>`).
        const cookie = res.headers.getSetCookie().find((c) => /^[^=]+\.better-auth\.session_token=/.test(c))
        handedOver = () => tokenOfCookie(cookie?.split(';')[0]?.split('=')[1])
        return outcome
      }
      return { userId, signIn }
    },
  },
]

const sessionsOf = async (userId: string) => (await db().select().from(session).where(eq(session.userId, userId))).length
const sessionTokensOf = async (userId: string) =>
  (await db().select().from(session).where(eq(session.userId, userId))).map((row) => row.token)

/** The user's `user.sign-in` audit events of one outcome, oldest first. */
async function signInEvents(userId: string, outcome: 'success' | 'failure') {
  const rows = await db().select().from(auditEvent).where(eq(auditEvent.type, 'user.sign-in'))
  return rows
    .filter((r) => r.outcome === outcome && (r.actorUserId === userId || r.targetUserId === userId))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
}

describe.each(METHODS)('sign-in pipeline: $name', (method) => {
  it('signs a user in who meets every rule: the session handed over in the answer, its audit event and the metric, once each', async () => {
    const { userId, signIn } = await method.prepare()
    const before = await sessionTokensOf(userId)
    const audited = await signInEvents(userId, 'success')
    reported.length = 0
    expect(await signIn()).toEqual({ kind: 'session' })
    const created = (await sessionTokensOf(userId)).filter((token) => !before.includes(token))
    expect(created).toHaveLength(1)
    expect(handedOver()).toBe(created[0])
    expect(reported).toEqual([[method.metric, 'success']])
    const events = await signInEvents(userId, 'success')
    expect(events.length).toBe(audited.length + 1)
    expect(events.at(-1)?.detail).toMatchObject({ method: method.metric })
  })

  it('refuses a banned user (403 BANNED_USER) and leaves no session; the refusal is audited and counted', async () => {
    const { userId, signIn } = await method.prepare()
    await db().update(user).set({ banned: true, banReason: 'test' }).where(eq(user.id, userId))
    const before = await sessionsOf(userId)
    reported.length = 0
    expect(await signIn()).toEqual({ kind: 'refused', code: '403 BANNED_USER' })
    expect(await sessionsOf(userId)).toBe(before)
    expect(handedOver()).toBeUndefined()
    expect(reported).toEqual([[method.metric, 'banned']])
    expect((await signInEvents(userId, 'failure')).at(-1)?.detail).toMatchObject({ method: method.metric, reason: 'BANNED_USER' })
  })

  it('refuses a banned user who has a second factor as banned, before any second-factor challenge', async () => {
    const { userId, signIn } = await method.prepare()
    await db().update(user).set({ banned: true, banReason: 'test', twoFactorEnabled: true }).where(eq(user.id, userId))
    const before = await sessionsOf(userId)
    expect(await signIn()).toEqual({ kind: 'refused', code: '403 BANNED_USER' })
    expect(await sessionsOf(userId)).toBe(before)
  })

  it(`${method.provesEmail ? 'verifies and signs in' : 'refuses'} an unverified user while requireEmailVerification is on`, async () => {
    const { userId, signIn } = await method.prepare()
    await db().update(user).set({ emailVerified: false }).where(eq(user.id, userId))
    const before = await sessionsOf(userId)
    server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: true } })
    try {
      expect(await signIn()).toEqual(method.provesEmail ? { kind: 'session' } : { kind: 'refused', code: '403 EMAIL_NOT_VERIFIED' })
    } finally {
      server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: null } })
    }
    // A proof of the mailbox ends the access nobody proved (the sign-up's session), then signs in.
    expect(await sessionsOf(userId)).toBe(method.provesEmail ? 1 : before)
    const [row] = await db().select().from(user).where(eq(user.id, userId))
    expect(row?.emailVerified).toBe(Boolean(method.provesEmail))
  })

  it('refuses a locked account (429 TOO_MANY_REQUESTS) and leaves no session', async () => {
    const { userId, signIn } = await method.prepare()
    const [row] = await db().select().from(user).where(eq(user.id, userId))
    const now = server.clock.now()
    await db()
      .insert(loginThrottle)
      .values({ key: `email:${row?.email}`, failures: 10, windowStart: now, lockedUntil: now + 900_000 })
    const before = await sessionsOf(userId)
    expect(await signIn()).toEqual({ kind: 'refused', code: '429 TOO_MANY_REQUESTS' })
    expect(await sessionsOf(userId)).toBe(before)
    await db()
      .delete(loginThrottle)
      .where(eq(loginThrottle.key, `email:${row?.email}`))
  })

  it(`${method.asksSecondFactor ? 'asks' : 'does not ask'} an enrolled user for the second factor`, async () => {
    const { userId, signIn } = await method.prepare()
    await db().update(user).set({ twoFactorEnabled: true }).where(eq(user.id, userId))
    const before = await sessionsOf(userId)
    if (method.asksSecondFactor) {
      expect(await signIn()).toEqual({ kind: 'second-factor' })
      expect(await sessionsOf(userId)).toBe(before)
      expect(handedOver()).toBeUndefined()
    } else {
      expect(await signIn()).toEqual({ kind: 'session' })
      expect(await sessionsOf(userId)).toBe(before + 1)
    }
  })
})

/** An anonymous sign-in's cookies and user. */
async function anonymousSession(): Promise<{ cookies: Cookies; userId: string }> {
  const client = new HttpClient(server.base)
  const res = await client.post<{ user: { id: string; isAnonymous: boolean } }>('/sign-in/anonymous')
  expect(res.status).toBe(200)
  expect(res.body.user.isAnonymous).toBe(true)
  return { cookies: new Map(client.jar.cookies), userId: res.body.user.id }
}

describe.each(METHODS.filter((m) => m.linksAnonymous !== false))('sign-in pipeline, anonymous link and remove: $name', (method) => {
  it('a sign-in carrying an anonymous session removes the anonymous user once the new session exists', async () => {
    const { userId, signIn } = await method.prepare()
    const anonymous = await anonymousSession()
    const before = await sessionsOf(userId)
    expect(await signIn(anonymous.cookies)).toEqual({ kind: 'session' })
    expect(await sessionsOf(userId)).toBe(before + 1)
    expect(await db().select().from(user).where(eq(user.id, anonymous.userId))).toEqual([])
    expect(await sessionsOf(anonymous.userId)).toBe(0)
  })

  it('a refused sign-in (banned) keeps the anonymous user', async () => {
    const { userId, signIn } = await method.prepare()
    await db().update(user).set({ banned: true, banReason: 'test' }).where(eq(user.id, userId))
    const anonymous = await anonymousSession()
    expect(await signIn(anonymous.cookies)).toEqual({ kind: 'refused', code: '403 BANNED_USER' })
    expect(await sessionsOf(anonymous.userId)).toBe(1)
  })
})

describe('sign-in pipeline: anonymous (a new user at each sign-in)', () => {
  it('signs in through the pipeline: a session, the sign-in audited with its method', async () => {
    const { userId } = await anonymousSession()
    expect(await sessionsOf(userId)).toBe(1)
    const events = await db().select().from(auditEvent).where(eq(auditEvent.targetUserId, userId))
    expect(events.find((e) => e.type === 'user.sign-in')?.detail).toEqual({ method: 'anonymous' })
  })

  it('is not refused for its unverified generated address while requireEmailVerification is on (as better-auth)', async () => {
    server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: true } })
    try {
      const { userId } = await anonymousSession()
      expect(await sessionsOf(userId)).toBe(1)
    } finally {
      server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: null } })
    }
  })
})

describe('a sign-in by redirect held for the second factor', () => {
  it("a provider's callback leads to the hosted page's second step, whose code finishes the sign-in", async () => {
    const { email, userId } = await signUpUser()
    const client = new HttpClient(server.base)
    await client.post('/sign-in/email', { email, password: PASSWORD })
    const enable = await client.post<{ totpURI: string }>('/two-factor/enable', { password: PASSWORD })
    const totp = URI.parse(enable.body.totpURI) as TOTP
    expect((await client.post('/two-factor/verify-totp', { code: totp.generate({ timestamp: server.clock.now() }) })).status).toBe(200)
    server.clock.advanceSeconds(30)

    // GitHub vouches for the same (verified) address: the account links, the sign-in is held.
    githubUser = { id: Math.floor(Math.random() * 1e9), email }
    const browser = new Browser()
    const start = await browser.postJson(`${server.base}/sign-in/social`, { provider: 'github', callbackURL: '/app' }, server.origin)
    const state = new URL(((await start.json()) as { url: string }).url).searchParams.get('state') as string
    const before = await sessionsOf(userId)
    const callback = await browser.request(`${server.base}/callback/github?code=good-code&state=${state}`)
    const held = new URL(callback.headers.get('location') as string)
    expect(`${held.origin}${held.pathname}`).toBe(`${server.base}/ui/sign-in`)
    expect(Object.fromEntries(held.searchParams)).toEqual({ step: 'two-factor', methods: 'totp,otp', returnTo: '/app' })
    expect(await sessionsOf(userId)).toBe(before)
    expect(browser.jar(server.origin).header()).not.toMatch(/session_token=/)

    const verified = await browser.postJson(
      `${server.base}/two-factor/verify-totp`,
      { code: totp.generate({ timestamp: server.clock.now() }) },
      server.origin,
    )
    expect(verified.status).toBe(200)
    expect(((await verified.json()) as { user: { id: string } }).user.id).toBe(userId)
    expect(await sessionsOf(userId)).toBe(before + 1)
    const me = await browser.request(`${server.base}/get-session`)
    expect(((await me.json()) as { user: { email: string } }).user.email).toBe(email)
  })
})

describe('one-time token: hands over the session it was issued for, not a sign-in', () => {
  /** A signed-in client's one-time token and the session it stands for. */
  async function issued() {
    const { email, userId } = await verifiedUser()
    const client = new HttpClient(server.base)
    const signedIn = await client.post<{ token: string }>('/sign-in/email', { email, password: PASSWORD })
    expect(signedIn.status).toBe(200)
    const generated = await client.get<{ token: string }>('/one-time-token/generate')
    expect(generated.status).toBe(200)
    return { userId, sessionToken: signedIn.body.token, token: generated.body.token }
  }

  it('answers the issuing session and its cookie, once; no new session, no sign-in audited or counted', async () => {
    const { userId, sessionToken, token } = await issued()
    const before = await sessionsOf(userId)
    const audited = await signInEvents(userId, 'success')
    reported.length = 0
    const other = new HttpClient(server.base)
    const res = await other.post<{ session: { token: string; userId: string } }>('/one-time-token/verify', { token })
    expect(res.status).toBe(200)
    expect(res.body.session).toMatchObject({ token: sessionToken, userId })
    expect(other.jar.cookies.get('better-auth.session_token')?.split('.')[0]).toBe(sessionToken)
    expect(await sessionsOf(userId)).toBe(before)
    expect(await signInEvents(userId, 'success')).toHaveLength(audited.length)
    expect(reported).toEqual([])
    // better-auth's plugin answers with a message only.
    const again = await new HttpClient(server.base).post('/one-time-token/verify', { token })
    expect([again.status, again.body]).toEqual([400, { message: 'Invalid token' }])
  })

  it('a token of a user banned since hands over no session: the ban ended it', async () => {
    const { userId, token } = await issued()
    const admin = await administrator(server)
    expect((await admin.client.admin.banUser({ userId, banReason: 'test' })).error).toBeNull()
    const other = new HttpClient(server.base)
    const res = await other.post('/one-time-token/verify', { token })
    expect([res.status, res.body]).toEqual([400, { message: 'Session not found' }])
    expect(other.jar.cookies.size).toBe(0)
    expect(await sessionsOf(userId)).toBe(0)
  })
})
