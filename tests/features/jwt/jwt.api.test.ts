import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createAuthClient } from 'better-auth/client'
import { jwtClient } from 'better-auth/client/plugins'
import { eq } from 'drizzle-orm'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, keypair } from '../../../server/db/schema.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { CookieJar, HttpClient, jarFetch, type SignedUp, signUp, uniqueEmail } from '../../helpers/http.js'
import { runCli } from '../../helpers/process.js'
import { silentLogger, startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { firstRow } from '../../../server/db/storage.js'

const run = promisify(execFile)
const VERIFIER = join(import.meta.dirname, '../..', 'helpers', 'jwt-verifier.mjs')
const SECRET = 'jwt-test-secret-0123456789-abcdefgh'

let server: TestServer
let panel: PanelService

async function op<T = Record<string, unknown>>(name: string, input: unknown = {}): Promise<T> {
  const result = await panel.dispatch(name, input)
  if (!result.ok) throw Object.assign(new Error(result.error.message), result.error)
  return result.data as T
}

type Verdict =
  | { ok: true; payload: Record<string, unknown>; header: { alg: string; kid: string } }
  | { ok: false; code: string; message: string }

/** Verifies in a separate node process with jose's createRemoteJWKSet against /jwks, at the server's clock. */
async function verifyElsewhere(token: string): Promise<Verdict> {
  const { stdout } = await run(process.execPath, [
    VERIFIER,
    `${server.base}/jwks`,
    token,
    server.origin,
    server.origin,
    String(server.clock.now()),
  ])
  return JSON.parse(stdout) as Verdict
}

const tokenOf = async (user: SignedUp): Promise<string> => {
  const res = await user.client.get<{ token: string }>('/token')
  expect(res.status).toBe(200)
  return res.body.token
}

const jwks = async () => (await new HttpClient(server.base).get<{ keys: Array<Record<string, string>> }>('/jwks')).body.keys

beforeAll(async () => {
  // The clock starts at real time so the CLI (system clock) and the server agree on "now".
  server = await startTestServer({ clock: new TestClock(Date.now()), secret: SECRET })
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
})
afterAll(() => server.close())

describe('switched off by default', () => {
  it('404 on /token and /jwks, no set-auth-jwt; on live from the panel', async () => {
    const user = await signUp(server.base)
    expect((await user.client.get('/token')).status).toBe(404)
    expect((await user.client.get('/jwks')).body).toEqual({ code: 'NOT_FOUND', message: 'Not Found' })
    expect((await user.client.get('/get-session')).headers.get('set-auth-jwt')).toBeNull()
    await op('jwt.configure', { patch: { enabled: true } })
    expect((await user.client.get('/token')).status).toBe(200)
  })
})

describe('tokens (official jwtClient)', () => {
  it('GET /token and the set-auth-jwt header: EdDSA, iss/aud the base URL, sub the user, 15 minutes', async () => {
    const jar = new CookieJar()
    const client = createAuthClient({
      baseURL: server.origin,
      plugins: [jwtClient()],
      fetchOptions: { customFetchImpl: jarFetch(server.origin, jar) },
    })
    const email = uniqueEmail('jwt')
    const signedUp = await client.signUp.email({ name: 'Jay', email, password: 'password1234' })
    const userId = signedUp.data?.user.id as string

    const got = await client.token()
    expect(got.error).toBeNull()
    const token = got.data?.token as string
    const header = decodeProtectedHeader(token)
    expect(header.alg).toBe('EdDSA')
    const claims = decodeJwt(token)
    expect(claims.sub).toBe(userId)
    expect(claims.iss).toBe(server.origin)
    expect(claims.aud).toBe(server.origin)
    expect(claims.email).toBe(email)
    expect(claims.iat).toBe(Math.floor(server.clock.now() / 1000))
    expect((claims.exp as number) - (claims.iat as number)).toBe(900)

    let headerJwt: string | null = null
    let exposed: string | null = null
    await client.getSession({
      fetchOptions: {
        onSuccess: (ctx) => {
          headerJwt = ctx.response.headers.get('set-auth-jwt')
          exposed = ctx.response.headers.get('access-control-expose-headers')
        },
      },
    })
    expect(decodeJwt(headerJwt as unknown as string).sub).toBe(userId)
    // The header's token carries the same user fields as /token's (no raw database columns).
    expect(Object.keys(decodeJwt(headerJwt as unknown as string)).sort()).toEqual(Object.keys(claims).sort())
    expect(exposed).toContain('set-auth-jwt')

    const keys = await client.jwks()
    expect(keys.data?.keys).toHaveLength(1)
    expect(keys.data?.keys[0]).toMatchObject({ kid: header.kid, alg: 'EdDSA', crv: 'Ed25519', kty: 'OKP' })
    expect(keys.data?.keys[0]).not.toHaveProperty('d')

    const verdict = await verifyElsewhere(token)
    expect(verdict).toMatchObject({ ok: true, payload: { sub: userId, email }, header: { alg: 'EdDSA', kid: header.kid } })
  })

  it('/token needs a session', async () => {
    const res = await new HttpClient(server.base).get('/token')
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ code: 'UNAUTHORIZED', message: 'Unauthorized' })
  })

  it('JWKS carries cache headers; private keys are sealed at rest', async () => {
    const res = await new HttpClient(server.base).get('/jwks')
    expect(res.headers.get('cache-control')).toBe('public, max-age=300')
    expect(res.headers.get('content-type')).toContain('application/json')
    for (const row of await server.gatehouse.ctx.db.select().from(keypair)) {
      expect(row.privateKey.startsWith('enc:v1:')).toBe(true)
      expect(row.privateKey).not.toContain('"d"')
      expect(JSON.parse(row.publicKey)).not.toHaveProperty('d')
    }
  })

  it('refuses a tampered token', async () => {
    const user = await signUp(server.base)
    const token = await tokenOf(user)
    const [h, p, s] = token.split('.') as [string, string, string]
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, role: 'admin' })).toString('base64url')}.${s}`
    expect(await verifyElsewhere(forged)).toMatchObject({ ok: false, code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' })
  })
})

describe('rotation', () => {
  it('panel rotation: old tokens verify during the grace period, then the old key leaves the JWKS and its tokens are refused', async () => {
    await op('jwt.configure', { patch: { jwks: { gracePeriod: 3600 } } })
    const user = await signUp(server.base)
    const before = await tokenOf(user)
    const oldKid = decodeProtectedHeader(before).kid
    expect((await verifyElsewhere(before)).ok).toBe(true)

    const rotated = await op<{ id: string; retired: string[] }>('jwt.rotate')
    expect(rotated.retired).toContain(oldKid)
    const after = await tokenOf(user)
    expect(decodeProtectedHeader(after).kid).toBe(rotated.id)
    expect((await jwks()).map((k) => k.kid)).toEqual(expect.arrayContaining([oldKid, rotated.id]))
    expect((await verifyElsewhere(before)).ok).toBe(true)
    expect((await verifyElsewhere(after)).ok).toBe(true)

    const listed = await op<{ keys: Array<{ id: string; signing: boolean; retiredAt: number | null; removedAt: number | null }> }>(
      'jwt.keys',
    )
    expect(listed.keys.find((k) => k.signing)?.id).toBe(rotated.id)
    const old = listed.keys.find((k) => k.id === oldKid)
    expect(old?.removedAt).toBe((old?.retiredAt as number) + 3600_000)

    // Past the grace period (and within the new token's lifetime, moved on with it).
    server.clock.advanceSeconds(3601)
    const fresh = await tokenOf(user)
    expect((await jwks()).map((k) => k.kid)).toEqual([rotated.id])
    expect(
      await firstRow(
        server.gatehouse.ctx.db
          .select()
          .from(keypair)
          .where(eq(keypair.id, oldKid as string)),
      ),
    ).toBeUndefined()
    // Refused (it has also expired by now; the next test isolates the removed key).
    expect((await verifyElsewhere(before)).ok).toBe(false)
    expect(await verifyElsewhere(fresh)).toMatchObject({ ok: true })

    const types = (await server.gatehouse.ctx.db.select({ type: auditEvent.type }).from(auditEvent)).map((e) => e.type)
    expect(types).toEqual(expect.arrayContaining(['jwt.key-rotated', 'jwt.key-removed']))
  })

  it('a token whose key was removed is refused even while it is in date', async () => {
    await op('jwt.configure', { patch: { jwks: { gracePeriod: 0 }, jwt: { expirationTime: '2h' } } })
    try {
      const user = await signUp(server.base)
      const token = await tokenOf(user)
      expect((await verifyElsewhere(token)).ok).toBe(true)
      await op('jwt.rotate')
      server.clock.advanceSeconds(1)
      expect(await verifyElsewhere(token)).toMatchObject({ ok: false, code: 'ERR_JWKS_NO_MATCHING_KEY' })
    } finally {
      await op('jwt.configure', { patch: { jwks: { gracePeriod: null }, jwt: { expirationTime: null } } })
    }
  })

  it('rotates by itself when the signing key is older than jwks.rotationInterval', async () => {
    await op('jwt.configure', { patch: { jwks: { rotationInterval: 3600 } } })
    try {
      const user = await signUp(server.base)
      const first = decodeProtectedHeader(await tokenOf(user)).kid
      server.clock.advanceSeconds(1800)
      expect(decodeProtectedHeader(await tokenOf(user)).kid).toBe(first)
      server.clock.advanceSeconds(1801)
      const second = decodeProtectedHeader(await tokenOf(user)).kid
      expect(second).not.toBe(first)
      expect((await jwks()).map((k) => k.kid)).toEqual(expect.arrayContaining([first, second]))
    } finally {
      await op('jwt.configure', { patch: { jwks: { rotationInterval: null } } })
    }
  })

  it('CLI rotation on the data directory of the running server', async () => {
    const user = await signUp(server.base)
    const before = decodeProtectedHeader(await tokenOf(user)).kid
    // On the PostgreSQL run the keys live in the server's database: the CLI is pointed at it too
    // (the test database has no password, so its location is its URL).
    const where = ['--data-dir', server.dataDir, ...(server.databaseUrl ? ['--database-url', server.databaseUrl] : [])]
    const out = await runCli(['jwt', 'rotate', ...where], { GATEHOUSE_SECRET: SECRET })
    expect(out.stderr).toBe('')
    expect(out.code).toBe(0)
    const newKid = /New signing key (\S+)/.exec(out.stdout)?.[1]
    expect(newKid).toBeTruthy()
    // The server notices another process's commit within 250 ms.
    let kid = before
    for (let i = 0; i < 50 && kid !== newKid; i++) {
      await new Promise((r) => setTimeout(r, 100))
      kid = decodeProtectedHeader(await tokenOf(user)).kid
    }
    expect(kid).toBe(newKid)
    const listed = await runCli(['jwt', 'keys', ...where], { GATEHOUSE_SECRET: SECRET })
    expect(listed.stdout).toContain(`${newKid}  EdDSA`)
    expect(listed.stdout).toContain('signing')
  })
})

describe('algorithms and claims', () => {
  for (const [alg, kty] of [
    ['RS256', 'RSA'],
    ['ES256', 'EC'],
  ] as const) {
    it(`${alg} when selected`, async () => {
      await op('jwt.configure', { patch: { jwks: { keyPairConfig: { alg } } } })
      try {
        const user = await signUp(server.base)
        const token = await tokenOf(user)
        expect(decodeProtectedHeader(token).alg).toBe(alg)
        const key = (await jwks()).find((k) => k.kid === decodeProtectedHeader(token).kid)
        expect(key).toMatchObject({ alg, kty })
        if (alg === 'RS256') expect(Buffer.from(key?.n as string, 'base64url').length * 8).toBeGreaterThanOrEqual(2048)
        expect(await verifyElsewhere(token)).toMatchObject({ ok: true, header: { alg } })
      } finally {
        await op('jwt.configure', { patch: { jwks: { keyPairConfig: null } } })
      }
    })
  }

  it('refuses RSA keys under 2048 bits', async () => {
    await expect(op('jwt.configure', { patch: { jwks: { keyPairConfig: { alg: 'RS256', modulusLength: 1024 } } } })).rejects.toMatchObject({
      status: 400,
      code: 'INVALID_CONFIG',
    })
  })

  it('adds the active organization, its role and teams when configured', async () => {
    const user = await signUp(server.base)
    const org = await user.client.post<{ id: string }>('/organization/create', { name: 'Claims', slug: `claims-${Date.now()}` })
    expect(org.status).toBe(200)
    await user.client.post('/organization/set-active', { organizationId: org.body.id })
    const plain = decodeJwt(await tokenOf(user))
    expect(plain).not.toHaveProperty('activeOrganizationId')
    expect(plain.role).toBe('user')
    await op('jwt.configure', { patch: { jwt: { claims: { activeOrganization: true, teams: true } } } })
    try {
      const claims = decodeJwt(await tokenOf(user))
      expect(claims.activeOrganizationId).toBe(org.body.id)
      expect(claims.organizationRole).toBe('owner')
      expect(claims.teams).toEqual(expect.any(Array))
    } finally {
      await op('jwt.configure', { patch: { jwt: { claims: null } } })
    }
  })

  it('disableSettingJwtHeader stops the get-session header', async () => {
    const user = await signUp(server.base)
    expect((await user.client.get('/get-session')).headers.get('set-auth-jwt')).toBeTruthy()
    await op('jwt.configure', { patch: { disableSettingJwtHeader: true } })
    try {
      expect((await user.client.get('/get-session')).headers.get('set-auth-jwt')).toBeNull()
    } finally {
      await op('jwt.configure', { patch: { disableSettingJwtHeader: null } })
    }
  })
})
