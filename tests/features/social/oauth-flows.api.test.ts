import { and, eq } from 'drizzle-orm'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { keySetsFor } from '../../../server/features/social/jwks.js'
import { account, user } from '../../../server/db/schema.js'
import { Browser, createSigningKey, FakeProvider, type RecordedRequest, type SigningKey } from '../../helpers/oauth-fakes.js'
import { CookieJar, signUp, uniqueEmail } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { firstRow } from '../../../server/db/storage.js'

/**
 * The engine's rules, driven through GitHub's definition against a loopback fake: state
 * handling, sign-up switches, linking, bans, provider tokens, account-info, the official client,
 * and ID-token sign-in for Apple and Facebook with key sets served on loopback.
 */
let server: TestServer
const fake = new FakeProvider()
const CLIENT_ID = 'gh-client'
const CLIENT_SECRET = 'gh-secret'

let ghProfile: Record<string, unknown>
let ghEmails: { email: string; verified: boolean; primary: boolean }[]
let tokenCounter = 0
let refreshFails = false
let appleKeysDown = false
let appleKey: SigningKey
let facebookKey: SigningKey
let rotatedKey: SigningKey | null = null
/** While set, the Facebook key set answers only once this settles (never, for a hang). */
let facebookHold: Promise<void> | null = null
const UNAUTHORIZED = { code: 'UNAUTHORIZED', message: 'Unauthorized' }

const db = () => server.gatehouse.ctx.db

function setGitHubUser(id: number, email: string, verified: boolean) {
  ghProfile = { login: `user${id}`, id, name: `User ${id}`, email: null, avatar_url: `https://avatars.example.com/${id}` }
  ghEmails = [{ email, verified, primary: true }]
}

beforeAll(async () => {
  await fake.start()
  fake.on('POST', '/gh/token', (req: RecordedRequest) => {
    if (req.form.get('client_secret') !== CLIENT_SECRET) return { status: 401, json: { error: 'invalid_client' } }
    if (req.form.get('grant_type') === 'refresh_token') {
      if (refreshFails) return { status: 400, json: { error: 'invalid_grant' } }
      if (!req.form.get('refresh_token')?.startsWith('refresh-')) return { status: 400, json: { error: 'invalid_grant' } }
    }
    tokenCounter++
    return {
      json: {
        access_token: `access-${tokenCounter}`,
        token_type: 'bearer',
        expires_in: 3600,
        refresh_token: `refresh-${tokenCounter}`,
        scope: 'read:user,user:email',
      },
    }
  })
  fake.on('GET', '/gh/user', (req) =>
    req.headers.authorization?.startsWith('Bearer access-') ? { json: ghProfile } : { status: 401, json: {} },
  )
  fake.on('GET', '/gh/emails', () => ({ json: ghEmails }))
  fake.on('GET', '/apple/keys', () => (appleKeysDown ? { status: 503, body: 'down' } : { json: { keys: [appleKey.publicJwk] } }))
  fake.on('GET', '/facebook/jwks', async () => {
    if (facebookHold) await facebookHold
    return { json: { keys: [facebookKey.publicJwk, ...(rotatedKey ? [rotatedKey.publicJwk] : [])] } }
  })
  appleKey = await createSigningKey('RS256')
  facebookKey = await createSigningKey('RS256')
  server = await startTestServer({
    config: {
      socialProviders: {
        github: {
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
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
        facebook: { clientId: 'fb-app-id', clientSecret: 'fb-secret', endpoints: { jwks: `${fake.url}/facebook/jwks` } },
        discord: { enabled: false, clientId: 'x', clientSecret: 'y' },
      },
    },
  })
})
afterAll(async () => {
  await server?.close()
  await fake.close()
})
beforeEach(() => {
  setGitHubUser(Math.floor(Math.random() * 1e9), uniqueEmail('gh'), true)
  refreshFails = false
})

async function startGitHub(browser: Browser, body: Record<string, unknown> = {}, path = '/sign-in/social') {
  const res = await browser.postJson(`${server.base}${path}`, { provider: 'github', ...body }, server.origin)
  expect(res.status).toBe(200)
  const json = (await res.json()) as { url: string; redirect: boolean }
  return { json, state: new URL(json.url).searchParams.get('state') as string }
}

/** sign-in (or link) through GitHub, the provider approving at once; returns the callback's Location. */
async function viaGitHub(browser: Browser, body: Record<string, unknown> = {}, path = '/sign-in/social'): Promise<string> {
  const { state } = await startGitHub(browser, body, path)
  const res = await browser.request(`${server.base}/callback/github?code=good-code&state=${state}`)
  expect(res.status).toBe(302)
  return res.headers.get('location') as string
}

async function currentUser(browser: Browser) {
  const res = await browser.request(`${server.base}/get-session`)
  return ((await res.json()) as { user: Record<string, unknown> } | null)?.user ?? null
}

describe('state and callback errors', () => {
  it('answers 404 for unknown or disabled providers and for ID tokens of providers without verification', async () => {
    const b = new Browser()
    for (const provider of ['nope', 'discord', 'google']) {
      const res = await b.postJson(`${server.base}/sign-in/social`, { provider }, server.origin)
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ code: 'PROVIDER_NOT_FOUND', message: 'Provider not found' })
    }
    const idt = await b.postJson(`${server.base}/sign-in/social`, { provider: 'github', idToken: { token: 'x.y.z' } }, server.origin)
    expect(idt.status).toBe(404)
    expect(await idt.json()).toEqual({ code: 'ID_TOKEN_NOT_SUPPORTED', message: 'id_token not supported' })
  })

  it('refuses an untrusted callbackURL before creating any state', async () => {
    const res = await new Browser().postJson(
      `${server.base}/sign-in/social`,
      { provider: 'github', callbackURL: 'https://evil.example/x' },
      server.origin,
    )
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ code: 'INVALID_CALLBACK_URL', message: 'Invalid callbackURL' })
  })

  it('redirects missing state, wrong state and provider errors to the error page', async () => {
    const b = new Browser()
    const none = await b.request(`${server.base}/callback/github?code=abc`)
    expect(none.headers.get('location')).toBe(`${server.base}/error?error=state_not_found`)
    const denied = await b.request(`${server.base}/callback/github?error=access_denied&error_description=The+user+said+no`)
    expect(denied.headers.get('location')).toBe(`${server.base}/error?error=access_denied&error_description=The%20user%20said%20no`)
    await startGitHub(b, { errorCallbackURL: '/oops' })
    const wrong = await b.request(`${server.base}/callback/github?code=abc&state=${'A'.repeat(32)}`)
    expect(wrong.headers.get('location')).toBe(`${server.base}/error?error=state_mismatch`)
    const { state } = await startGitHub(b, { errorCallbackURL: '/oops' })
    const noCode = await b.request(`${server.base}/callback/github?state=${state}`)
    expect(noCode.headers.get('location')).toBe('/oops?error=no_code')
    const { state: s2 } = await startGitHub(b, { errorCallbackURL: '/oops' })
    const otherProvider = await b.request(`${server.base}/callback/apple?code=x&state=${s2}`)
    expect(otherProvider.headers.get('location')).toBe('/oops?error=state_mismatch')
  })
})

describe('sign-up switches and linking rules', () => {
  it('disableSignUp refuses new users (signup_disabled) but still signs existing ones in', async () => {
    const b = new Browser()
    expect(await viaGitHub(b, { callbackURL: '/in' })).toBe('/in')
    server.gatehouse.config.update({ socialProviders: { github: { disableSignUp: true } } })
    try {
      expect(await viaGitHub(new Browser(), { callbackURL: '/in' })).toBe('/in')
      setGitHubUser(42_000_001, uniqueEmail('new'), true)
      expect(await viaGitHub(new Browser(), { callbackURL: '/in', errorCallbackURL: '/oops' })).toBe('/oops?error=signup_disabled')
    } finally {
      server.gatehouse.config.update({ socialProviders: { github: { disableSignUp: false } } })
    }
  })

  it('disableImplicitSignUp creates users only when the app asks with requestSignUp', async () => {
    server.gatehouse.config.update({ socialProviders: { github: { disableImplicitSignUp: true } } })
    try {
      expect(await viaGitHub(new Browser(), { callbackURL: '/in', errorCallbackURL: '/oops' })).toBe('/oops?error=signup_disabled')
      const b = new Browser()
      expect(await viaGitHub(b, { callbackURL: '/in', newUserCallbackURL: '/hello', requestSignUp: true })).toBe('/hello')
      expect(await currentUser(b)).toMatchObject({ email: ghEmails[0]?.email })
    } finally {
      server.gatehouse.config.update({ socialProviders: { github: { disableImplicitSignUp: false } } })
    }
  })

  it('links to an existing email user only if the provider verified the email or is trusted', async () => {
    const local = await signUp(server.base)
    setGitHubUser(42_000_100, local.email.toUpperCase(), false)
    expect(await viaGitHub(new Browser(), { errorCallbackURL: '/oops' })).toBe('/oops?error=account_not_linked')

    server.gatehouse.config.update({ account: { accountLinking: { trustedProviders: ['github'] } } })
    try {
      const b = new Browser()
      expect(await viaGitHub(b, { callbackURL: '/in' })).toBe('/in')
      expect((await currentUser(b))?.id).toBe(local.user.id)
    } finally {
      server.gatehouse.config.update({ account: { accountLinking: { trustedProviders: [] } } })
    }
    const linked = await db()
      .select()
      .from(account)
      .where(and(eq(account.userId, local.user.id), eq(account.providerId, 'github')))
    expect(linked).toHaveLength(1)
  })

  it('does not link at all when account linking is disabled', async () => {
    const local = await signUp(server.base)
    setGitHubUser(42_000_200, local.email, true)
    server.gatehouse.config.update({ account: { accountLinking: { enabled: false } } })
    try {
      expect(await viaGitHub(new Browser(), { errorCallbackURL: '/oops' })).toBe('/oops?error=account_not_linked')
      const res = await local.client.post('/link-social', { provider: 'github' })
      expect(res.status).toBe(400)
      expect(res.body).toEqual({ code: 'LINKING_NOT_ALLOWED', message: 'Account linking is not allowed' })
    } finally {
      server.gatehouse.config.update({ account: { accountLinking: { enabled: true } } })
    }
  })

  it('redirects a banned user with error=banned and creates no session', async () => {
    const b = new Browser()
    await viaGitHub(b)
    const id = (await currentUser(b))?.id as string
    await db().update(user).set({ banned: true, banReason: 'spam' }).where(eq(user.id, id))
    const again = new Browser()
    const location = await viaGitHub(again, { errorCallbackURL: '/oops' })
    expect(location).toBe(
      `${server.base}/error?error=banned&error_description=${encodeURIComponent('You have been banned from this application. Please contact support if you believe this is an error.')}`,
    )
    expect(again.jar(server.origin).get('better-auth.session_token')).toBeUndefined()
  })
})

describe('/link-social', () => {
  async function linkFlow(client: Browser, body: Record<string, unknown> = {}) {
    return viaGitHub(client, { callbackURL: '/settings', errorCallbackURL: '/settings/error', ...body }, '/link-social')
  }
  async function signedInBrowser() {
    const local = await signUp(server.base)
    const b = new Browser()
    for (const [k, v] of local.client.jar.cookies) b.jar(server.origin).cookies.set(k, v)
    return { local, b }
  }

  it('needs a session, then links the provider account to the signed-in user', async () => {
    const anonymous = await new Browser().postJson(`${server.base}/link-social`, { provider: 'github' }, server.origin)
    expect([anonymous.status, await anonymous.json()]).toEqual([401, UNAUTHORIZED])
    const { local, b } = await signedInBrowser()
    setGitHubUser(42_000_300, local.email, true)
    expect(await linkFlow(b)).toBe('/settings')
    const rows = await db().select().from(account).where(eq(account.userId, local.user.id))
    expect(rows.map((r) => r.providerId).sort()).toEqual(['credential', 'github'])
  })

  it('refuses an account linked to another user, a different email, and an unverified email', async () => {
    const first = await signedInBrowser()
    setGitHubUser(42_000_400, first.local.email, true)
    expect(await linkFlow(first.b)).toBe('/settings')
    const second = await signedInBrowser()
    expect(await linkFlow(second.b)).toBe('/settings/error?error=account_already_linked_to_different_user')

    setGitHubUser(42_000_401, uniqueEmail('elsewhere'), true)
    expect(await linkFlow(second.b)).toBe("/settings/error?error=email_doesn't_match")
    server.gatehouse.config.update({ account: { accountLinking: { allowDifferentEmails: true } } })
    try {
      expect(await linkFlow(second.b)).toBe('/settings')
    } finally {
      server.gatehouse.config.update({ account: { accountLinking: { allowDifferentEmails: false } } })
    }
    setGitHubUser(42_000_402, second.local.email, false)
    expect(await linkFlow(second.b)).toBe('/settings/error?error=unable_to_link_account')
  })
})

describe('provider tokens', () => {
  it('get-access-token refreshes only when the token expires within 5 s; refresh-token always does', async () => {
    const b = new Browser()
    await viaGitHub(b)
    const me = await currentUser(b)
    const row = await firstRow(
      db()
        .select()
        .from(account)
        .where(and(eq(account.userId, me?.id as string), eq(account.providerId, 'github'))),
    )
    if (!row) throw new Error('no account')
    const first = `access-${tokenCounter}`
    const post = async (path: string, body: unknown) => {
      const res = await b.postJson(`${server.base}${path}`, body, server.origin)
      return { status: res.status, body: (await res.json()) as Record<string, unknown> }
    }
    const fresh = await post('/get-access-token', { providerId: 'github' })
    expect(fresh).toEqual({
      status: 200,
      body: {
        accessToken: first,
        accessTokenExpiresAt: new Date(server.clock.now() + 3600_000).toISOString(),
        scopes: ['read:user', 'user:email'],
      },
    })
    // 1.7 clients select by internal account id, 1.2 by provider and provider account id.
    expect((await post('/get-access-token', { accountId: row.id })).body.accessToken).toBe(first)
    expect((await post('/get-access-token', { providerId: 'github', accountId: row.accountId })).body.accessToken).toBe(first)

    server.clock.advance(3600_000 - 6_000)
    expect((await post('/get-access-token', { accountId: row.id })).body.accessToken).toBe(first)
    server.clock.advance(2_000)
    const refreshed = await post('/get-access-token', { accountId: row.id })
    expect(refreshed.body.accessToken).toBe(`access-${tokenCounter}`)
    expect(refreshed.body.accessToken).not.toBe(first)
    expect(fake.calls('POST', '/gh/token').at(-1)?.form.get('refresh_token')).toBe(`refresh-${tokenCounter - 1}`)
    const stored = await firstRow(db().select().from(account).where(eq(account.id, row.id)))
    expect(stored?.accessToken).toMatch(/^enc:v1:/)
    expect(stored?.refreshToken).toMatch(/^enc:v1:/)
    expect(stored?.accessTokenExpiresAt?.getTime()).toBe(server.clock.now() + 3600_000)

    const forced = await post('/refresh-token', { accountId: row.id })
    expect(forced.status).toBe(200)
    expect(forced.body).toMatchObject({
      accessToken: `access-${tokenCounter}`,
      refreshToken: `refresh-${tokenCounter}`,
      providerId: 'github',
    })

    refreshFails = true
    expect(await post('/refresh-token', { accountId: row.id })).toEqual({
      status: 400,
      body: { code: 'FAILED_TO_REFRESH_ACCESS_TOKEN', message: 'Failed to refresh access token' },
    })
    server.clock.advance(3600_000)
    expect(await post('/get-access-token', { accountId: row.id })).toEqual({
      status: 400,
      body: { code: 'FAILED_TO_GET_A_VALID_ACCESS_TOKEN', message: 'Failed to get a valid access token' },
    })
    expect(await post('/get-access-token', { providerId: 'apple' })).toEqual({
      status: 400,
      body: { code: 'ACCOUNT_NOT_FOUND', message: 'Account not found' },
    })
    const anonymous = await new Browser().postJson(
      `${server.base}/get-access-token`,
      { providerId: 'github', userId: me?.id },
      server.origin,
    )
    expect([anonymous.status, await anonymous.json()]).toEqual([401, UNAUTHORIZED])
  })

  it('account-info answers for the own account by internal id (GET) or provider id (POST), never another user’s', async () => {
    const b = new Browser()
    await viaGitHub(b)
    const me = await currentUser(b)
    const row = await firstRow(
      db()
        .select()
        .from(account)
        .where(and(eq(account.userId, me?.id as string), eq(account.providerId, 'github'))),
    )
    if (!row) throw new Error('no account')
    const viaGet = await b.request(`${server.base}/account-info?accountId=${row.id}`)
    expect(viaGet.status).toBe(200)
    const body = (await viaGet.json()) as Record<string, unknown>
    expect(body).toEqual({
      user: { id: row.accountId, name: ghProfile.name, email: ghEmails[0]?.email, image: ghProfile.avatar_url, emailVerified: true },
      data: { ...ghProfile, emails: ghEmails },
    })
    const viaPost = await b.postJson(`${server.base}/account-info`, { accountId: row.accountId }, server.origin)
    expect(await viaPost.json()).toEqual(body)

    const other = new Browser()
    setGitHubUser(42_000_600, uniqueEmail('other'), true)
    await viaGitHub(other, {})
    const foreign = await other.request(`${server.base}/account-info?accountId=${row.id}`)
    expect(foreign.status).toBe(400)
    expect(await foreign.json()).toEqual({ code: 'ACCOUNT_NOT_FOUND', message: 'Account not found' })
  })
})

describe('the official better-auth client', () => {
  function officialClient(jar = new CookieJar()) {
    return official(server, { jar }).client
  }

  it('signIn.social returns the provider URL; the callback signs in; linkSocial links another account', async () => {
    const jar = new CookieJar()
    const client = officialClient(jar)
    const firstGitHubId = String(ghProfile.id)
    const started = await client.signIn.social({ provider: 'github', callbackURL: '/dashboard' })
    expect(started.error).toBeNull()
    expect(started.data).toMatchObject({ redirect: true })
    const url = new URL((started.data as { url: string }).url)
    expect(url.origin + url.pathname).toBe(`${fake.url}/gh/authorize`)
    const cb = await fetch(`${server.base}/callback/github?code=c&state=${url.searchParams.get('state')}`, {
      redirect: 'manual',
      headers: { cookie: jar.header() },
    })
    jar.store(cb)
    expect(cb.headers.get('location')).toBe('/dashboard')
    const session = await client.getSession()
    expect(session.data?.user.email).toBe(ghEmails[0]?.email)

    setGitHubUser(42_000_500, ghEmails[0]?.email as string, true)
    const linking = await client.linkSocial({ provider: 'github', callbackURL: '/linked' })
    expect(linking.error).toBeNull()
    const linkURL = new URL((linking.data as { url: string }).url)
    const back = await fetch(`${server.base}/callback/github?code=c&state=${linkURL.searchParams.get('state')}`, {
      redirect: 'manual',
      headers: { cookie: jar.header() },
    })
    expect(back.headers.get('location')).toBe('/linked')
    const accounts = await db()
      .select()
      .from(account)
      .where(eq(account.userId, session.data?.user.id as string))
    expect(accounts.map((a) => a.accountId).sort()).toEqual([firstGitHubId, '42000500'].sort())
  })
})

describe('ID-token sign-in: Apple and Facebook key sets', () => {
  const post = (body: unknown) => new Browser().postJson(`${server.base}/sign-in/social`, body, server.origin)
  const iat = () => Math.floor(server.clock.now() / 1000)
  /** Every ID-token refusal is the same 401 (better-auth: INVALID_TOKEN, "invalid token"). */
  const expectInvalidToken = async (res: Response) =>
    expect([res.status, await res.json()]).toEqual([401, { code: 'INVALID_TOKEN', message: 'invalid token' }])

  it('apple: signature, issuer, audience (bundle id), nonce and a 1-hour maximum age', async () => {
    const claims = {
      iss: 'https://appleid.apple.com',
      aud: 'com.example.app',
      sub: '000111.apple',
      email: uniqueEmail('apple'),
      email_verified: 'true',
      nonce: 'n-1',
    }
    const ok = await post({ provider: 'apple', idToken: { token: await appleKey.sign(claims, { issuedAt: iat() }), nonce: 'n-1' } })
    expect(ok.status).toBe(200)
    expect(((await ok.json()) as { user: Record<string, unknown> }).user).toMatchObject({ email: claims.email, emailVerified: true })

    const badNonce = await post({ provider: 'apple', idToken: { token: await appleKey.sign(claims, { issuedAt: iat() }), nonce: 'n-2' } })
    await expectInvalidToken(badNonce)
    const old = await post({
      provider: 'apple',
      idToken: { token: await appleKey.sign(claims, { issuedAt: iat() - 3700, expiresIn: 86400 }) },
    })
    await expectInvalidToken(old)
    const wrongAud = await post({
      provider: 'apple',
      idToken: { token: await appleKey.sign({ ...claims, aud: 'com.other' }, { issuedAt: iat() }) },
    })
    await expectInvalidToken(wrongAud)
    const wrongIss = await post({
      provider: 'apple',
      idToken: { token: await appleKey.sign({ ...claims, iss: 'https://evil.example' }, { issuedAt: iat() }) },
    })
    await expectInvalidToken(wrongIss)
    const otherKey = await createSigningKey('RS256')
    const forged = await post({ provider: 'apple', idToken: { token: await otherKey.sign(claims, { issuedAt: iat() }) } })
    await expectInvalidToken(forged)
  })

  it('facebook: RS256 only (an HS256 token is refused), audience and issuer checked', async () => {
    const claims = { iss: 'https://www.facebook.com', aud: 'fb-app-id', sub: '10101', email: uniqueEmail('fb'), name: 'Fay Limited' }
    const ok = await post({ provider: 'facebook', idToken: { token: await facebookKey.sign(claims, { issuedAt: iat() }) } })
    expect(ok.status).toBe(200)
    expect(((await ok.json()) as { user: Record<string, unknown> }).user).toMatchObject({ name: 'Fay Limited', emailVerified: false }) // Limited Login carries no verification claim (better-auth 1.7: unverified)
    const { SignJWT } = await import('jose')
    const hs = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: facebookKey.kid })
      .setIssuedAt(iat())
      .setExpirationTime(iat() + 600)
      .sign(new TextEncoder().encode('fb-secret-fb-secret-fb-secret-32b'))
    const refused = await post({ provider: 'facebook', idToken: { token: hs } })
    await expectInvalidToken(refused)
    const wrongAud = await post({
      provider: 'facebook',
      idToken: { token: await facebookKey.sign({ ...claims, aud: 'other-app' }, { issuedAt: iat() }) },
    })
    await expectInvalidToken(wrongAud)
  })

  it('apple: an unreachable key set answers 400 "Keys not found"', async () => {
    // A fresh key id forces a fetch (the cache does not know it); the cooldown has long passed.
    server.clock.advance(31_000)
    appleKeysDown = true
    const previous = appleKey
    appleKey = await createSigningKey('RS256')
    try {
      const res = await post({
        provider: 'apple',
        idToken: {
          token: await appleKey.sign(
            { iss: 'https://appleid.apple.com', aud: 'com.example.app', sub: 'x', email: 'x@example.com' },
            { issuedAt: iat() },
          ),
        },
      })
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ code: 'KEYS_NOT_FOUND', message: 'Keys not found' })
    } finally {
      appleKeysDown = false
      appleKey = previous
    }
  })

  it('caches key sets 10 minutes and refetches for an unknown key at most every 30 s', async () => {
    const fetches = () => fake.calls('GET', '/facebook/jwks').length
    server.clock.advance(600_001)
    const claims = { iss: 'https://www.facebook.com', aud: 'fb-app-id', sub: '20202', email: uniqueEmail('fb') }
    const before = fetches()
    expect((await post({ provider: 'facebook', idToken: { token: await facebookKey.sign(claims, { issuedAt: iat() }) } })).status).toBe(200)
    expect(fetches()).toBe(before + 1)
    server.clock.advance(599_000)
    expect((await post({ provider: 'facebook', idToken: { token: await facebookKey.sign(claims, { issuedAt: iat() }) } })).status).toBe(200)
    expect(fetches()).toBe(before + 1)

    // A rotated key: the first token with its kid triggers one refetch; within 30 s no more fetches.
    rotatedKey = await createSigningKey('RS256')
    server.clock.advance(2_000) // the cached set is now older than 10 min → refetched, includes the new key
    expect((await post({ provider: 'facebook', idToken: { token: await rotatedKey.sign(claims, { issuedAt: iat() }) } })).status).toBe(200)
    expect(fetches()).toBe(before + 2)
    const unknown = await createSigningKey('RS256')
    await expectInvalidToken(await post({ provider: 'facebook', idToken: { token: await unknown.sign(claims, { issuedAt: iat() }) } }))
    expect(fetches()).toBe(before + 2)
    server.clock.advance(30_000)
    await expectInvalidToken(await post({ provider: 'facebook', idToken: { token: await unknown.sign(claims, { issuedAt: iat() }) } }))
    expect(fetches()).toBe(before + 3)
  })

  it('waits for a slow key set (a key it brings signs in), and gives up on one that does not answer once its 5 s timeout fires', async () => {
    // An unknown key id after the cooldown makes Gatehouse fetch the set again. The fake holds the
    // answer, and the timeout is fired by the test (order and outcome, no real wait).
    const sets = keySetsFor(server.gatehouse.ctx)
    const realTimeout = sets.timeoutSignal
    const asked: number[] = []
    let timeout = new AbortController()
    sets.timeoutSignal = (ms) => {
      asked.push(ms)
      return timeout.signal
    }
    const previousRotated = rotatedKey
    const signIn = async (key: SigningKey, email: string) =>
      post({
        provider: 'facebook',
        idToken: { token: await key.sign({ iss: 'https://www.facebook.com', aud: 'fb-app-id', sub: email, email }, { issuedAt: iat() }) },
      })
    try {
      // A fresh set first (older than 10 min: fetched again), so that both steps below are
      // refetches for an unknown key id, not for a stale set.
      server.clock.advance(600_001)
      expect((await signIn(facebookKey, uniqueEmail('freshjwks'))).status).toBe(200)
      asked.length = 0
      // 1. The set answers late, with the new key: the sign-in waited for it, so it succeeds (a
      // sign-in that did not wait would have checked the token against the old set: 401).
      server.clock.advance(31_000)
      let release = () => {}
      facebookHold = new Promise((resolve) => {
        release = resolve
      })
      const slowKey = await createSigningKey('RS256')
      rotatedKey = slowKey
      let fetchesBefore = fake.calls('GET', '/facebook/jwks').length
      const waiting = signIn(slowKey, uniqueEmail('slowjwks'))
      await vi.waitFor(() => expect(fake.calls('GET', '/facebook/jwks').length).toBe(fetchesBefore + 1), { timeout: 10_000 })
      // The key set was asked for with the spec's 5 s bound.
      expect(asked).toEqual([5_000])
      release()
      const late = await waiting
      expect(late.status, await late.clone().text()).toBe(200)

      // 2. The set never answers: the sign-in fails once the timeout fires, not before.
      server.clock.advance(31_000)
      facebookHold = new Promise(() => {})
      timeout = new AbortController()
      const stranger = await createSigningKey('RS256')
      fetchesBefore = fake.calls('GET', '/facebook/jwks').length
      let abortedFirst: boolean | null = null
      const pending = signIn(stranger, 'h@example.com').finally(() => {
        abortedFirst = timeout.signal.aborted
      })
      await vi.waitFor(() => expect(fake.calls('GET', '/facebook/jwks').length).toBe(fetchesBefore + 1), { timeout: 10_000 })
      expect(asked).toEqual([5_000, 5_000])
      timeout.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))
      const res = await pending
      expect([res.status, await res.json(), abortedFirst]).toEqual([401, { code: 'INVALID_TOKEN', message: 'invalid token' }, true])
    } finally {
      sets.timeoutSignal = realTimeout
      facebookHold = null
      rotatedKey = previousRotated
    }
  })
})
