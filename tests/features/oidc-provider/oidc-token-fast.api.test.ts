import { createHash } from 'node:crypto'
import { and, eq, gt, isNull, or } from 'drizzle-orm'
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, oidcModel, user } from '../../../server/db/schema.js'
import { createClient } from '../../../server/features/oidc-provider/clients.js'
import { destroyModel, findModel } from '../../../server/features/oidc-provider/store.js'
import { fastTokenHandOvers } from '../../../server/features/oidc-provider/index.js'
import { CookieJar } from '../../helpers/http.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * The token endpoint's fast path (server/features/oidc-provider/token-fast.ts) against
 * oidc-provider alone: two servers, one with `oidcProvider.fastTokenEndpoint` on (the default),
 * one with it off, set up alike; every request of the matrix runs on both after the same steps,
 * and what each answers (status, the headers that matter, the JSON with token values replaced by
 * labels, the ID token verified with jose against the server's JWKS), what each stores (the
 * grant's rows, the client's client-credentials tokens) and what each audits must be the same.
 * Each case also says whether the fast path answered it or handed it to oidc-provider.
 */

const RP = 'http://rp.example.test'
const CALLBACK = `${RP}/callback`
const PASSWORD = 'correct horse battery'

interface World {
  name: 'fast' | 'provider'
  server: TestServer
}

let fast: World
let provider: World

beforeAll(async () => {
  const [a, b] = await Promise.all([
    startTestServer({ config: { oidcProvider: { enabled: true } } }),
    startTestServer({ config: { oidcProvider: { enabled: true, fastTokenEndpoint: false } } }),
  ])
  fast = { name: 'fast', server: a }
  provider = { name: 'provider', server: b }
})

afterAll(async () => {
  await Promise.all([fast?.server.close(), provider?.server.close()])
})

interface Party {
  clientId: string
  secret: string | null
  basic: string
  userId: string
  email: string
  jar: CookieJar
}

interface Tokens {
  access_token: string
  refresh_token?: string
  id_token?: string
  scope?: string
}

async function signedIn(world: World, email?: string): Promise<{ userId: string; email: string; jar: CookieJar }> {
  const person = await verifiedSignUp(world.server, { name: 'Ada Lovelace', password: PASSWORD, ...(email ? { email } : {}) })
  const jar = new CookieJar()
  const res = await fetch(`${world.server.base}/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: world.server.origin },
    body: JSON.stringify({ email: person.email, password: PASSWORD }),
  })
  expect(res.status).toBe(200)
  jar.store(res)
  return { userId: person.user.id, email: person.email, jar }
}

/** A client (skip-consent, so the code flow needs no consent page) and a signed-in user. */
async function party(world: World, options: { public?: boolean; email?: string } = {}): Promise<Party> {
  const { client, clientSecret } = await createClient(
    world.server.gatehouse.ctx,
    { name: 'Differential RP', redirectUris: [CALLBACK], skipConsent: true, public: options.public ?? false },
    { via: 'cli' },
  )
  const person = await signedIn(world, options.email)
  return {
    clientId: client.clientId,
    secret: clientSecret,
    basic: `Basic ${Buffer.from(`${client.clientId}:${clientSecret ?? ''}`).toString('base64')}`,
    ...person,
  }
}

/** One authorization code flow through the Gatehouse session (served by oidc-provider on both servers). */
async function codeFlow(world: World, p: Party, scope = 'openid email profile offline_access', prompt = 'consent'): Promise<Tokens> {
  const verifier = oidc.randomPKCECodeVerifier()
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const origin = world.server.origin
  let url = `${world.server.base}/oauth2/authorize?${new URLSearchParams({
    client_id: p.clientId,
    response_type: 'code',
    redirect_uri: CALLBACK,
    scope,
    nonce: 'n-0S6_WzA2Mj',
    state: 'st',
    ...(prompt ? { prompt } : {}),
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })}`
  for (let hop = 0; hop < 10 && url.startsWith(origin); hop++) {
    const res = await fetch(url, { headers: { cookie: p.jar.header() }, redirect: 'manual' })
    p.jar.store(res)
    await res.arrayBuffer()
    url = new URL(res.headers.get('location') as string, url).href
  }
  const code = new URL(url).searchParams.get('code')
  if (!code) throw new Error(`no code: ${url}`)
  const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier })
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  if (p.secret) headers.authorization = p.basic
  else body.set('client_id', p.clientId)
  const res = await fetch(`${world.server.base}/oauth2/token`, { method: 'POST', headers, body })
  expect(res.status).toBe(200)
  return (await res.json()) as Tokens
}

interface TokenRequest {
  params: Record<string, string>
  headers?: Record<string, string>
  /** Send the raw body as is (else params form-encoded). */
  raw?: string
}

const refreshOf = (p: Party, token: string, extra: Record<string, string> = {}): TokenRequest => ({
  params: { grant_type: 'refresh_token', refresh_token: token, ...extra },
  headers: { authorization: p.basic },
})

function send(world: World, request: TokenRequest): Promise<Response> {
  return fetch(`${world.server.base}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...request.headers },
    body: request.raw ?? new URLSearchParams(request.params),
  })
}

/** Stable names for the random values of one observation (tokens, grant and session ids). */
class Labels {
  private readonly names = new Map<string, string>()
  constructor(private readonly fixed: Record<string, string>) {}
  of(value: unknown, prefix = 'token'): unknown {
    if (typeof value !== 'string') return value
    if (this.fixed[value]) return this.fixed[value]
    let name = this.names.get(value)
    if (!name) {
      name = `<${prefix}${this.names.size + 1}>`
      this.names.set(value, name)
    }
    return name
  }
}

const TIMES = new Set(['iat', 'exp', 'iiat', 'authTime', 'auth_time', 'consumed'])
const IDS = new Set(['jti', 'grantId', 'sessionUid', 'sid', 'uid'])
/** Values that differ between the two servers by construction (each has its own user and PKCE verifier). */
const PER_SERVER = new Set(['email', 'preferred_username', 'codeChallenge'])

function normalisePayload(payload: Record<string, unknown>, labels: Labels): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(payload)) {
    if (TIMES.has(key) || PER_SERVER.has(key)) out[key] = typeof value
    else if (IDS.has(key) || key === 'accountId' || key === 'clientId' || key === 'sub' || key === 'aud')
      out[key] = labels.of(value, key === 'jti' ? 'token' : key)
    else out[key] = value
  }
  if (typeof payload.exp === 'number' && typeof payload.iat === 'number') out.lifetime = payload.exp - payload.iat
  return out
}

interface Observation {
  status: number
  headers: Record<string, string | null>
  body: unknown
  idToken?: unknown
  stored: unknown[]
  audit: unknown[]
  servedBy: 'fast path' | 'oidc-provider'
  handOver?: string
}

/**
 * Sends the request and records what came of it. `presented`: the refresh token sent (named
 * `<presented>`), `grantIds`: the grants whose rows are compared, `p`: the client and user.
 */
async function observe(world: World, p: Party, request: TokenRequest, presented?: string): Promise<Observation> {
  const { server } = world
  const db = server.gatehouse.ctx.db
  const lastAudit = (await db.select({ id: auditEvent.id }).from(auditEvent)).reduce((m, r) => Math.max(m, r.id), 0)
  const grantIds = new Set<string>()
  if (presented) {
    const row = (
      await db
        .select()
        .from(oidcModel)
        .where(and(eq(oidcModel.kind, 'RefreshToken'), eq(oidcModel.id, presented)))
    )[0]
    if (row?.grantId) grantIds.add(row.grantId)
  }
  fastTokenHandOvers.length = 0
  const res = await send(world, request)
  const handOver = fastTokenHandOvers[0]
  const labels = new Labels({ [p.clientId]: '<client>', [p.userId]: '<user>', ...(presented ? { [presented]: '<presented>' } : {}) })
  const text = await res.text()
  let body: unknown = text
  let idToken: unknown
  try {
    const json = JSON.parse(text) as Record<string, unknown>
    body = Object.fromEntries(
      Object.entries(json).map(([k, v]) => [k, ['access_token', 'refresh_token', 'id_token'].includes(k) ? labels.of(v) : v]),
    )
    if (typeof json.id_token === 'string') {
      const jwks = createRemoteJWKSet(new URL(`${server.base}/oauth2/jwks`))
      const { payload, protectedHeader } = await jwtVerify(json.id_token, jwks, { issuer: server.base, audience: p.clientId })
      expect(decodeProtectedHeader(json.id_token).kid).toBeTruthy()
      idToken = {
        header: { alg: protectedHeader.alg, typ: protectedHeader.typ ?? null },
        claims: normalisePayload({ ...payload, iss: '<issuer>' }, labels),
      }
    }
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error
  }
  // The grants' rows (and, for client credentials, the client's tokens), as stored now.
  const rows = await db
    .select()
    .from(oidcModel)
    .where(
      or(
        ...[...grantIds].map((g) => or(eq(oidcModel.grantId, g), and(eq(oidcModel.kind, 'Grant'), eq(oidcModel.id, g)))),
        and(eq(oidcModel.kind, 'ClientCredentials'), isNull(oidcModel.grantId)),
      ),
    )
  const stored = rows
    .map((row) => {
      const payload = JSON.parse(row.payload) as Record<string, unknown>
      return { row, payload }
    })
    .filter(({ row, payload }) => row.kind !== 'ClientCredentials' || payload.clientId === p.clientId)
    // A stable order whatever the engine returns: kind, consumed, then what tells tokens of one kind apart.
    .map((entry) => ({
      ...entry,
      order: [entry.row.kind, entry.row.consumedAt ? 1 : 0, entry.payload.gty, entry.payload.rotations, entry.payload.scope].join('|'),
    }))
    .sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0))
    .map(({ row, payload }) => ({
      kind: row.kind,
      id: labels.of(row.id, row.kind === 'Grant' ? 'grantId' : 'token'),
      grantId: labels.of(row.grantId, 'grantId'),
      consumed: row.consumedAt !== null,
      // Minutes: oidc-provider works a row's lifetime out from the wall clock, a second may tick between the two servers.
      expiresInMinutes: row.expiresAt ? Math.round((row.expiresAt.getTime() - server.clock.now()) / 60_000) : null,
      payload: normalisePayload(payload, labels),
      // The stored text's member order too (oidc-provider's models write them in a fixed order).
      order: Object.keys(payload).join(' '),
    }))
  const audit = (await db.select().from(auditEvent).where(gt(auditEvent.id, lastAudit))).map((e) => ({
    type: e.type,
    outcome: e.outcome,
    actor: labels.of(e.actorUserId),
    targetUser: labels.of(e.targetUserId),
    target: labels.of(e.target),
    detail: e.detail && 'grantId' in e.detail ? { ...e.detail, grantId: labels.of(e.detail.grantId, 'grantId') } : e.detail,
    ip: e.ipAddress,
  }))
  const www = res.headers.get('www-authenticate')
  return {
    status: res.status,
    headers: {
      'cache-control': res.headers.get('cache-control'),
      pragma: res.headers.get('pragma'),
      'content-type': res.headers.get('content-type'),
      'www-authenticate': www ? www.replace(server.base, '<issuer>') : null,
    },
    body,
    idToken,
    stored,
    audit,
    servedBy: handOver === undefined ? 'fast path' : 'oidc-provider',
    handOver,
  }
}

/** Runs the same case on both servers; the answers, stored rows and audit entries must match. */
async function differential(
  setup: (world: World) => Promise<{ p: Party; request: TokenRequest; presented?: string }>,
): Promise<{ fast: Observation; provider: Observation }> {
  const a = await setup(fast)
  const b = await setup(provider)
  const seenFast = await observe(fast, a.p, a.request, a.presented)
  const seenProvider = await observe(provider, b.p, b.request, b.presented)
  const { servedBy, handOver, ...comparedFast } = seenFast
  const { servedBy: _s, handOver: _h, ...comparedProvider } = seenProvider
  expect(comparedFast).toEqual(comparedProvider)
  // The provider-only server never takes the fast path.
  expect(seenProvider.handOver).toBeUndefined()
  return { fast: seenFast, provider: seenProvider }
}

describe('token endpoint fast path against oidc-provider alone', () => {
  it('a good rotating refresh (Basic): same answer, rows, ID token and audit; served by the fast path', async () => {
    const { fast: seen } = await differential(async (world) => {
      const p = await party(world)
      const tokens = await codeFlow(world, p)
      return { p, request: refreshOf(p, tokens.refresh_token as string), presented: tokens.refresh_token }
    })
    expect(seen.servedBy).toBe('fast path')
    expect(seen.status).toBe(200)
    expect(seen.headers['cache-control']).toBe('no-store')
    expect(Object.keys(seen.body as object)).toEqual(['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type'])
    expect(seen.idToken).toBeDefined()
    expect(seen.stored.map((r) => (r as { kind: string; consumed: boolean }).kind)).toEqual(
      expect.arrayContaining(['AccessToken', 'Grant', 'RefreshToken']),
    )
    expect(seen.audit).toEqual([expect.objectContaining({ type: 'oidc.token-issued', actor: '<user>', target: '<client>' })])
  })

  it('client_secret_post, a narrowed scope, a scope without openid: the same, fast', async () => {
    const extras: Record<string, string>[] = [{}, { scope: 'openid email' }, { scope: 'email' }]
    for (const extra of extras) {
      const { fast: seen } = await differential(async (world) => {
        const p = await party(world)
        const tokens = await codeFlow(world, p)
        return {
          p,
          request: {
            params: {
              grant_type: 'refresh_token',
              refresh_token: tokens.refresh_token as string,
              client_id: p.clientId,
              client_secret: p.secret as string,
              ...extra,
            },
          },
          presented: tokens.refresh_token,
        }
      })
      expect(seen.servedBy).toBe('fast path')
      expect(seen.status).toBe(200)
    }
  })

  it('a public client refreshes with its client_id alone: the same, fast', async () => {
    const { fast: seen } = await differential(async (world) => {
      const p = await party(world, { public: true })
      const tokens = await codeFlow(world, p)
      return {
        p,
        request: { params: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string, client_id: p.clientId } },
        presented: tokens.refresh_token,
      }
    })
    expect(seen.servedBy).toBe('fast path')
    expect(seen.status).toBe(200)
  })

  it('a session-bound refresh token (offline_access not granted) refreshes while the session lives, not after sign-out', async () => {
    const { fast: alive } = await differential(async (world) => {
      const p = await party(world)
      const tokens = await codeFlow(world, p, 'openid email offline_access', '')
      return { p, request: refreshOf(p, tokens.refresh_token as string), presented: tokens.refresh_token }
    })
    expect(alive.servedBy).toBe('fast path')
    expect(alive.status).toBe(200)
    const { fast: ended } = await differential(async (world) => {
      const p = await party(world)
      const tokens = await codeFlow(world, p, 'openid email offline_access', '')
      const out = await fetch(`${world.server.base}/sign-out`, {
        method: 'POST',
        headers: { origin: world.server.origin, cookie: p.jar.header(), 'content-type': 'application/json' },
        body: '{}',
      })
      expect(out.status).toBe(200)
      return { p, request: refreshOf(p, tokens.refresh_token as string), presented: tokens.refresh_token }
    })
    expect(ended.servedBy).toBe('oidc-provider')
    expect(ended.status).toBe(400)
  })

  // Refusals are oidc-provider's own: reuse (grant revoked), expired, foreign client, wrong or no secret,
  // unknown client, revoked grant, banned user, a scope not granted. One test each: each case runs
  // two code flows on two servers, too much for one test's time on a loaded machine.
  type RefusalCase = [string, (world: World) => Promise<{ p: Party; request: TokenRequest; presented?: string }>, number, string]
  const refusals: RefusalCase[] = [
    [
      'reused refresh token',
      async (world) => {
        const p = await party(world)
        const tokens = await codeFlow(world, p)
        expect((await send(world, refreshOf(p, tokens.refresh_token as string))).status).toBe(200)
        return { p, request: refreshOf(p, tokens.refresh_token as string), presented: tokens.refresh_token }
      },
      400,
      'invalid_grant',
    ],
    [
      'expired refresh token',
      async (world) => {
        const p = await party(world)
        const tokens = await codeFlow(world, p)
        world.server.clock.advanceSeconds(world.server.gatehouse.ctx.config().oidcProvider.ttl.refreshToken + 1)
        return { p, request: refreshOf(p, tokens.refresh_token as string), presented: tokens.refresh_token }
      },
      400,
      'invalid_grant',
    ],
    [
      'another client presents the token',
      async (world) => {
        const p = await party(world)
        const other = await party(world)
        const tokens = await codeFlow(world, p)
        return { p, request: refreshOf(other, tokens.refresh_token as string), presented: tokens.refresh_token }
      },
      400,
      'invalid_grant',
    ],
    [
      'wrong secret (Basic)',
      async (world) => {
        const p = await party(world)
        const tokens = await codeFlow(world, p)
        const basic = `Basic ${Buffer.from(`${p.clientId}:not-the-secret`).toString('base64')}`
        return {
          p,
          request: { ...refreshOf(p, tokens.refresh_token as string), headers: { authorization: basic } },
          presented: tokens.refresh_token,
        }
      },
      401,
      'invalid_client',
    ],
    [
      'wrong secret (POST)',
      async (world) => {
        const p = await party(world)
        const tokens = await codeFlow(world, p)
        const params = {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token as string,
          client_id: p.clientId,
          client_secret: 'nope',
        }
        return { p, request: { params }, presented: tokens.refresh_token }
      },
      401,
      'invalid_client',
    ],
    [
      'confidential client without a secret',
      async (world) => {
        const p = await party(world)
        const tokens = await codeFlow(world, p)
        return {
          p,
          request: { params: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string, client_id: p.clientId } },
          presented: tokens.refresh_token,
        }
      },
      401,
      'invalid_client',
    ],
    [
      'unknown client',
      async (world) => {
        const p = await party(world)
        const basic = `Basic ${Buffer.from('no-such-client:secret').toString('base64')}`
        return { p, request: { params: { grant_type: 'client_credentials' }, headers: { authorization: basic } } }
      },
      401,
      'invalid_client',
    ],
    [
      'revoked grant',
      async (world) => {
        const p = await party(world)
        const tokens = await codeFlow(world, p)
        // The grant alone goes (its tokens stay): oidc-provider refuses with "grant not found".
        const row = await findModel(world.server.gatehouse.ctx, 'RefreshToken', tokens.refresh_token as string)
        await destroyModel(world.server.gatehouse.ctx, 'Grant', row?.grantId as string)
        return { p, request: refreshOf(p, tokens.refresh_token as string), presented: tokens.refresh_token }
      },
      400,
      'invalid_grant',
    ],
    [
      'banned user',
      async (world) => {
        const p = await party(world)
        const tokens = await codeFlow(world, p)
        await world.server.gatehouse.ctx.db.update(user).set({ banned: true }).where(eq(user.id, p.userId))
        return { p, request: refreshOf(p, tokens.refresh_token as string), presented: tokens.refresh_token }
      },
      400,
      'invalid_grant',
    ],
    [
      'a scope the refresh token does not hold',
      async (world) => {
        const p = await party(world)
        const tokens = await codeFlow(world, p, 'openid email offline_access')
        return { p, request: refreshOf(p, tokens.refresh_token as string, { scope: 'openid profile' }), presented: tokens.refresh_token }
      },
      400,
      'invalid_scope',
    ],
    [
      'a public client asks for client credentials',
      async (world) => {
        const p = await party(world, { public: true })
        return { p, request: { params: { grant_type: 'client_credentials', client_id: p.clientId } } }
      },
      400,
      'invalid_request',
    ],
    [
      'an unsupported grant type',
      async (world) => {
        const p = await party(world)
        return { p, request: { params: { grant_type: 'password', username: 'x', password: 'y' }, headers: { authorization: p.basic } } }
      },
      400,
      'unsupported_grant_type',
    ],
    [
      'a DPoP header that is no proof',
      async (world) => {
        const p = await party(world)
        const tokens = await codeFlow(world, p)
        return {
          p,
          request: { ...refreshOf(p, tokens.refresh_token as string), headers: { authorization: p.basic, dpop: 'not-a-jwt' } },
          presented: tokens.refresh_token,
        }
      },
      400,
      'invalid_dpop_proof',
    ],
    [
      'the refresh token parameter twice',
      async (world) => {
        const p = await party(world)
        const tokens = await codeFlow(world, p)
        const raw = `grant_type=refresh_token&refresh_token=${tokens.refresh_token}&refresh_token=${tokens.refresh_token}`
        return { p, request: { params: {}, raw, headers: { authorization: p.basic } }, presented: tokens.refresh_token }
      },
      400,
      'invalid_request',
    ],
  ]
  it.each(refusals)('a refusal is oidc-provider’s own: %s', async (name, setup, status, error) => {
    const { fast: seen } = await differential(setup)
    expect({ name, servedBy: seen.servedBy, status: seen.status, error: (seen.body as { error?: string }).error }).toEqual({
      name,
      servedBy: 'oidc-provider',
      status,
      error,
    })
  })

  it('client credentials with and without scope: the same answer, row and audit; fast', async () => {
    for (const scope of [undefined, 'openid email', 'email not-a-scope']) {
      const { fast: seen } = await differential(async (world) => {
        const p = await party(world)
        return {
          p,
          request: { params: { grant_type: 'client_credentials', ...(scope ? { scope } : {}) }, headers: { authorization: p.basic } },
        }
      })
      expect(seen.servedBy).toBe('fast path')
      expect(seen.status).toBe(200)
      expect(seen.stored).toHaveLength(1)
      expect(seen.audit).toEqual([expect.objectContaining({ type: 'oidc.token-issued', target: '<client>', actor: null })])
    }
  })

  it('a token the fast path issued works on userinfo, introspection, revocation and a refresh through oidc-provider, and back', async () => {
    const p = await party(fast)
    const first = await codeFlow(fast, p)
    fastTokenHandOvers.length = 0
    const viaFast = (await (await send(fast, refreshOf(p, first.refresh_token as string))).json()) as Tokens
    expect(fastTokenHandOvers).toEqual([])
    const info = await fetch(`${fast.server.base}/oauth2/userinfo`, { headers: { authorization: `Bearer ${viaFast.access_token}` } })
    expect(info.status).toBe(200)
    expect(((await info.json()) as { sub: string; email: string }).email).toBe(p.email)
    const introspect = async (token: string) =>
      (await (
        await fetch(`${fast.server.base}/oauth2/introspect`, {
          method: 'POST',
          headers: { authorization: p.basic, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }),
        })
      ).json()) as { active: boolean; sub?: string; client_id?: string }
    expect(await introspect(viaFast.access_token)).toMatchObject({ active: true, sub: p.userId, client_id: p.clientId })
    expect(await introspect(viaFast.refresh_token as string)).toMatchObject({ active: true, sub: p.userId })
    // An unknown parameter makes the fast path hand over: oidc-provider (which ignores it) rotates the fast path's token.
    const viaProvider = await send(fast, refreshOf(p, viaFast.refresh_token as string, { unrelated: '1' }))
    expect(fastTokenHandOvers).toEqual(['parameter unrelated'])
    expect(viaProvider.status).toBe(200)
    const third = (await viaProvider.json()) as Tokens
    // …and the fast path rotates oidc-provider's.
    fastTokenHandOvers.length = 0
    const fourthRes = await send(fast, refreshOf(p, third.refresh_token as string))
    expect(fourthRes.status).toBe(200)
    expect(fastTokenHandOvers).toEqual([])
    const fourth = (await fourthRes.json()) as Tokens
    const revoked = await fetch(`${fast.server.base}/oauth2/revoke`, {
      method: 'POST',
      headers: { authorization: p.basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: fourth.refresh_token as string }),
    })
    expect(revoked.status).toBe(200)
    expect(await introspect(fourth.refresh_token as string)).toEqual({ active: false })
    const after = await send(fast, refreshOf(p, fourth.refresh_token as string))
    expect(after.status).toBe(400)
    expect(fastTokenHandOvers).toContain('refresh token not found')
  })
})
