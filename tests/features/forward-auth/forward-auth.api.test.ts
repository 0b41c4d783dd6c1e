import { and, eq } from 'drizzle-orm'
import { type TOTP, URI } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, member, user } from '../../../server/db/schema.js'
import { banUser, setRole, systemActor } from '../../../server/features/admin/index.js'
import { allowedCounts } from '../../../server/features/forward-auth/counts.js'
import { freePort } from '../../helpers/engines.js'
import { HttpClient, rawRequest, signUp, uniqueEmail } from '../../helpers/http.js'
import { markVerified, verifiedSignUp } from '../../helpers/members.js'
import { serverLog, startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Forward auth's contract with reverse proxies (issue 28), on the real server over raw HTTP: the
 * two endpoints' statuses and Remote-* headers, the order of decision, the headers each endpoint
 * reads, trusted proxies, and that sign-out, bans, revocation and role changes apply at once.
 */

let server: TestServer
const PASSWORD = 'correct horse battery'

const RULES = [
  { domain: 'public.lan', policy: 'bypass' },
  { domain: 'app.lan', resources: ['^/public(/.*)?$'], policy: 'bypass' },
  { domain: 'app.lan', resources: ['^/admin(/.*)?$'], policy: 'signed-in', subject: { roles: ['admin'] } },
  { domain: 'app.lan', policy: 'signed-in' },
  { domain: 'org.lan', policy: 'signed-in', subject: { organizations: ['acme-fa'], teams: ['ops'] } },
  { domain: 'mfa.lan', policy: 'two-factor' },
  { domain: 'closed.lan', policy: 'deny' },
  { domain: '*.wild.lan', policy: 'signed-in' },
  { domain: 'teams.lan', policy: 'signed-in', subject: { organizations: ['acme-teams'], teams: ['ops'] } },
  { domain: 'qualified.lan', policy: 'signed-in', subject: { teams: ['acme-teams/sre'] } },
  { domain: 'display.lan', policy: 'signed-in', subject: { teams: ['display-fa/Release Ops'] } },
] as const

beforeAll(async () => {
  // The organizations the rules name do not exist yet: one start-up warning each (groups/claims.ts).
  serverLog.allowWarning(/^groups: forwardAuth\.rules\[\d+\]\.subject\.(organizations|teams) requires "(acme-fa|acme-teams|display-fa)/)
  server = await startTestServer({
    config: { forwardAuth: { enabled: true, rules: RULES as never }, twoFactor: { enabled: true } },
  })
})
afterAll(() => server.close())

interface Raw {
  status: number
  headers: import('node:http').IncomingHttpHeaders
  text: string
}

/** nginx's auth_request subrequest: X-Original-URL / X-Original-Method, the browser's cookies. */
function authRequest(
  url: string | null,
  options: { cookie?: string; method?: string; headers?: Record<string, string>; query?: string } = {},
) {
  const headers: Record<string, string> = { ...options.headers }
  if (url !== null) headers['x-original-url'] = url
  if (options.method) headers['x-original-method'] = options.method
  if (options.cookie) headers.cookie = options.cookie
  return rawRequest(`${server.base}/forward-auth/auth-request${options.query ?? ''}`, { headers })
}

/** Caddy's / Traefik's forward_auth: X-Forwarded-Method, -Proto, -Host, -Uri. */
function forwardAuth(url: string | null, options: { cookie?: string; method?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...options.headers }
  if (url !== null) {
    const u = new URL(url)
    headers['x-forwarded-proto'] = u.protocol.slice(0, -1)
    headers['x-forwarded-host'] = u.host
    headers['x-forwarded-uri'] = `${u.pathname}${u.search}`
  }
  headers['x-forwarded-method'] = options.method ?? 'GET'
  if (options.cookie) headers.cookie = options.cookie
  return rawRequest(`${server.base}/forward-auth/forward-auth`, { headers })
}

const remote = (r: Raw) => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(r.headers)) {
    if (name.startsWith('remote-')) out[name] = Buffer.from(String(value), 'latin1').toString('utf8')
  }
  return out
}

const errorOf = (r: Raw) => JSON.parse(r.text) as { code: string; message: string }

async function signedIn(overrides: Record<string, unknown> = {}) {
  const s = await verifiedSignUp(server, { password: PASSWORD, ...overrides })
  return { ...s, cookie: s.client.jar.header() }
}

describe('auth-request (nginx)', () => {
  it('not signed in: 401 without Remote-* headers, on signed-in, two-factor and deny rules and the default', async () => {
    for (const url of ['https://app.lan/', 'https://mfa.lan/', 'https://closed.lan/', 'https://unknown.lan/']) {
      const r = await authRequest(url)
      expect(r.status, url).toBe(401)
      expect(errorOf(r).code).toBe('UNAUTHORIZED')
      expect(remote(r)).toEqual({})
      expect(r.headers['cache-control']).toBe('no-store')
      // For nginx (which cannot encode a URL): where to send the browser, in Location beside the 401.
      expect(r.headers.location).toBe(`${server.base}/ui/sign-in?returnTo=${encodeURIComponent(url)}`)
    }
  })

  it('signed in: 200 with Remote-User (username in lower case), Remote-Email, Remote-Name as UTF-8, Remote-Groups', async () => {
    const withName = await signedIn({ name: 'Zoë Ærø 日本', username: `Fa_User${Date.now().toString(36)}` })
    const r = await authRequest('https://app.lan/dashboard?x=1', { cookie: withName.cookie, method: 'GET' })
    expect(r.status).toBe(200)
    expect(r.text).toBe('')
    const username = (await server.gatehouse.ctx.db.select().from(user).where(eq(user.id, withName.user.id)))[0]?.username
    expect(username).toMatch(/^fa_user/)
    expect(remote(r)).toEqual({
      'remote-user': username,
      'remote-email': withName.email,
      'remote-name': 'Zoë Ærø 日本',
      'remote-groups': 'user',
    })
    // Without a username: the email.
    const plain = await signedIn()
    const p = await authRequest('http://APP.lan:8080/', { cookie: plain.cookie })
    expect(p.status).toBe(200)
    expect(remote(p)['remote-user']).toBe(plain.email)
    // A bearer token stands for the cookie as on every endpoint.
    const bearer = await rawRequest(`${server.base}/forward-auth/auth-request`, {
      headers: { 'x-original-url': 'https://app.lan/', authorization: `Bearer ${plain.token}` },
    })
    expect(bearer.status).toBe(200)
  })

  it('bypass: 200 without Remote-* signed in or not; a glob does not cover its bare name', async () => {
    const s = await signedIn()
    for (const cookie of [undefined, s.cookie]) {
      for (const url of ['https://public.lan/x', 'https://app.lan/public/logo.png', 'https://app.lan/public']) {
        const r = await authRequest(url, { cookie })
        expect(r.status, url).toBe(200)
        expect(remote(r)).toEqual({})
      }
    }
    expect((await authRequest('https://a.wild.lan/', { cookie: s.cookie })).status).toBe(200)
    expect((await authRequest('https://wild.lan/', { cookie: s.cookie })).status).toBe(403)
  })

  it('paths: resolved and decoded before the rules; a malformed escape is a deny', async () => {
    const s = await signedIn()
    // /public/../admin is /admin: the admin rule, not the public bypass.
    expect((await authRequest('https://app.lan/public/../admin', { cookie: s.cookie })).status).toBe(403)
    expect((await authRequest('https://app.lan/public/%2e%2e/admin', { cookie: s.cookie })).status).toBe(403)
    expect((await authRequest('https://app.lan/public/..%2Fadmin', { cookie: s.cookie })).status).toBe(403)
    // //admin and /%2Fadmin are /admin to most servers: the admin rule.
    expect((await authRequest('https://app.lan//admin', { cookie: s.cookie })).status).toBe(403)
    expect((await authRequest('https://app.lan/%2Fadmin', { cookie: s.cookie })).status).toBe(403)
    expect((await authRequest('https://app.lan/public/%zz', { cookie: s.cookie })).status).toBe(403)
    expect((await authRequest('https://app.lan/public/%zz')).status).toBe(401)
    // The query is not the path.
    expect((await authRequest('https://app.lan/x?next=/admin', { cookie: s.cookie })).status).toBe(200)
  })

  it('deny and an unmet subject: 403 when signed in; the first matching rule decides', async () => {
    const s = await signedIn()
    const closed = await authRequest('https://closed.lan/', { cookie: s.cookie })
    expect(closed.status).toBe(403)
    expect(errorOf(closed).code).toBe('FORBIDDEN')
    expect(remote(closed)).toEqual({})
    expect((await authRequest('https://unknown.lan/', { cookie: s.cookie })).status).toBe(403)
    expect((await authRequest('https://app.lan/admin/users', { cookie: s.cookie })).status).toBe(403)
  })

  it('a role change applies to the very next request; Remote-Groups keeps the stored order', async () => {
    const s = await signedIn()
    expect((await authRequest('https://app.lan/admin', { cookie: s.cookie })).status).toBe(403)
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: s.user.id, role: ['admin', 'user'] }, null)
    const r = await authRequest('https://app.lan/admin', { cookie: s.cookie })
    expect(r.status).toBe(200)
    expect(remote(r)['remote-groups']).toBe('admin,user')
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: s.user.id, role: 'user' }, null)
    expect((await authRequest('https://app.lan/admin', { cookie: s.cookie })).status).toBe(403)
  })

  it('organizations and teams: each list given must hold; Remote-Groups lists roles, then slugs with their member roles, then teams (the one group rule)', async () => {
    const s = await signedIn()
    expect((await authRequest('https://org.lan/', { cookie: s.cookie })).status).toBe(403)
    // acme-fa is named by a rule, so reserved: a plain user cannot create it, an administrator can.
    const claimed = await s.client.post<{ code: string }>('/organization/create', { name: 'Acme', slug: 'acme-fa' })
    expect(claimed.status).toBe(403)
    expect(claimed.body).toEqual({
      code: 'ORGANIZATION_SLUG_RESERVED',
      message: 'Organization slug is reserved by the server configuration',
    })
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: s.user.id, role: 'admin' }, null)
    const created = await s.client.post<{ id: string }>('/organization/create', { name: 'Acme', slug: 'acme-fa' })
    expect(created.status).toBe(200)
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: s.user.id, role: 'user' }, null)
    // A member of the organization but of no team named ops: still 403.
    expect((await authRequest('https://org.lan/', { cookie: s.cookie })).status).toBe(403)
    const team = await s.client.post<{ id: string }>('/organization/create-team', { name: 'ops', organizationId: created.body.id })
    expect(team.status).toBe(200)
    const added = await s.client.post('/organization/add-team-member', { teamId: team.body.id, userId: s.user.id })
    expect(added.status).toBe(200)
    const r = await authRequest('https://org.lan/', { cookie: s.cookie })
    expect(r.status).toBe(200)
    expect(remote(r)['remote-groups']).toBe('user,acme-fa,acme-fa:owner,acme-fa/acme,acme-fa/ops')
  })

  it("a team of the rule's organization: not a team of that name in an organization the person created", async () => {
    const owner = await signedIn()
    // A reserved slug (the rules name it): created by an administrator, who then keeps the user role.
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: owner.user.id, role: 'admin' }, null)
    const acme = await owner.client.post<{ id: string }>('/organization/create', { name: 'Acme Teams', slug: 'acme-teams' })
    expect(acme.status).toBe(200)
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: owner.user.id, role: 'user' }, null)
    expect((await owner.client.post('/organization/create-team', { name: 'ops', organizationId: acme.body.id })).status).toBe(200)
    // A plain member of acme-teams, in none of its teams.
    const m = await signedIn()
    await server.gatehouse.ctx.db.insert(member).values({
      id: `m-${m.user.id}`,
      organizationId: acme.body.id,
      userId: m.user.id,
      role: 'member',
      createdAt: new Date(server.clock.now()),
    })
    expect((await authRequest('https://teams.lan/', { cookie: m.cookie })).status).toBe(403)
    // Creates an organization of their own with a team "ops" and joins it.
    const own = await m.client.post<{ id: string }>('/organization/create', { name: 'Mine', slug: 'mine-teams' })
    expect(own.status).toBe(200)
    const team = await m.client.post<{ id: string }>('/organization/create-team', { name: 'ops', organizationId: own.body.id })
    expect(team.status).toBe(200)
    expect((await m.client.post('/organization/add-team-member', { teamId: team.body.id, userId: m.user.id })).status).toBe(200)
    expect((await authRequest('https://teams.lan/', { cookie: m.cookie })).status).toBe(403)
    expect((await authRequest('https://qualified.lan/', { cookie: m.cookie })).status).toBe(403)
    expect((await authRequest('https://qualified.lan/', { cookie: owner.cookie })).status).toBe(403)
    const joined = await owner.client.post('/organization/add-team-member', {
      teamId: (await owner.client.post<{ id: string }>('/organization/create-team', { name: 'sre', organizationId: acme.body.id })).body.id,
      userId: owner.user.id,
    })
    expect(joined.status).toBe(200)
    expect((await authRequest('https://qualified.lan/', { cookie: owner.cookie })).status).toBe(200)
  })

  it('Remote-Groups: a team goes out by its slug, so no team name can carry a separator (`,` `;` space) into the list', async () => {
    const s = await signedIn()
    const org = await s.client.post<{ id: string }>('/organization/create', { name: 'Commas', slug: 'commas-fa' })
    expect(org.status).toBe(200)
    for (const name of ['x,admin', 'a;admin', 'Release  Ops', 'Équipe Été', '!!!']) {
      const team = await s.client.post<{ id: string }>('/organization/create-team', { name, organizationId: org.body.id })
      expect(team.status).toBe(200)
      expect((await s.client.post('/organization/add-team-member', { teamId: team.body.id, userId: s.user.id })).status).toBe(200)
    }
    const r = await authRequest('https://app.lan/', { cookie: s.cookie })
    expect(r.status).toBe(200)
    // '!!!' has no letter or digit: no group. Team groups sorted by name.
    expect(remote(r)['remote-groups']).toBe(
      'user,commas-fa,commas-fa:owner,commas-fa/a-admin,commas-fa/commas,commas-fa/equipe-ete,commas-fa/release-ops,commas-fa/x-admin',
    )
  })

  it('a rule naming a team by its display name (before team groups were slugs) still matches it', async () => {
    const admin = await signedIn()
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: admin.user.id, role: 'admin' }, null)
    const org = await admin.client.post<{ id: string }>('/organization/create', { name: 'Display', slug: 'display-fa' })
    expect(org.status).toBe(200)
    const team = await admin.client.post<{ id: string }>('/organization/create-team', { name: 'Release Ops', organizationId: org.body.id })
    expect(team.status).toBe(200)
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: admin.user.id, role: 'user' }, null)
    expect((await authRequest('https://display.lan/', { cookie: admin.cookie })).status).toBe(403)
    expect((await admin.client.post('/organization/add-team-member', { teamId: team.body.id, userId: admin.user.id })).status).toBe(200)
    const r = await authRequest('https://display.lan/', { cookie: admin.cookie })
    expect(r.status).toBe(200)
    expect(remote(r)['remote-groups']).toContain('display-fa/release-ops')
  })

  it('sign-out, revocation and a ban take effect on the next request', async () => {
    const a = await signedIn()
    expect((await authRequest('https://app.lan/', { cookie: a.cookie })).status).toBe(200)
    expect((await a.client.post('/sign-out', {})).status).toBe(200)
    expect((await authRequest('https://app.lan/', { cookie: a.cookie })).status).toBe(401)

    const b = await signedIn()
    const other = new HttpClient(server.base)
    expect((await other.post('/sign-in/email', { email: b.email, password: PASSWORD })).status).toBe(200)
    expect((await authRequest('https://app.lan/', { cookie: b.cookie })).status).toBe(200)
    expect((await other.post('/revoke-other-sessions', {})).status).toBe(200)
    expect((await authRequest('https://app.lan/', { cookie: b.cookie })).status).toBe(401)

    const c = await signedIn()
    expect((await authRequest('https://app.lan/', { cookie: c.cookie })).status).toBe(200)
    await banUser(server.gatehouse.ctx, systemActor('cli'), { userId: c.user.id }, null)
    expect((await authRequest('https://app.lan/', { cookie: c.cookie })).status).toBe(401)

    // A ban written without ending the sessions (by hand, or a tool) still refuses at once.
    const d = await signedIn()
    expect((await authRequest('https://app.lan/', { cookie: d.cookie })).status).toBe(200)
    await server.gatehouse.ctx.db.update(user).set({ banned: true }).where(eq(user.id, d.user.id))
    expect((await authRequest('https://app.lan/', { cookie: d.cookie })).status).toBe(401)
    // An expired ban no longer counts.
    await server.gatehouse.ctx.db
      .update(user)
      .set({ banExpires: new Date(server.clock.now() - 1000) })
      .where(eq(user.id, d.user.id))
    expect((await authRequest('https://app.lan/', { cookie: d.cookie })).status).toBe(200)
  })

  it('an expired session is 401', async () => {
    const s = await signedIn()
    expect((await authRequest('https://app.lan/', { cookie: s.cookie })).status).toBe(200)
    server.clock.advanceSeconds(8 * 86_400)
    expect((await authRequest('https://app.lan/', { cookie: s.cookie })).status).toBe(401)
  })

  it('reads only X-Original-URL: missing or malformed is 400, X-Forwarded-* are ignored', async () => {
    const s = await signedIn()
    const missing = await authRequest(null, { cookie: s.cookie })
    expect(missing.status).toBe(400)
    expect(errorOf(missing).code).toBe('MISSING_ORIGINAL_URL')
    const forwardedOnly = await authRequest(null, {
      cookie: s.cookie,
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.lan', 'x-forwarded-uri': '/' },
    })
    expect(forwardedOnly.status).toBe(400)
    for (const bad of ['/relative', 'ftp://app.lan/', 'https://', 'https://user:pw@app.lan/', 'not a url']) {
      const r = await authRequest(bad, { cookie: s.cookie })
      expect(r.status, bad).toBe(400)
      expect(errorOf(r).code).toBe('INVALID_ORIGINAL_URL')
    }
  })

  it('the routed path (a query string) answers as the direct one', async () => {
    const s = await signedIn()
    const direct = await authRequest('https://app.lan/', { cookie: s.cookie })
    const routed = await authRequest('https://app.lan/', { cookie: s.cookie, query: '?via=router' })
    expect(routed.status).toBe(200)
    expect(remote(routed)).toEqual(remote(direct))
    expect((await authRequest('https://closed.lan/', { cookie: s.cookie, query: '?x' })).status).toBe(403)
    expect((await authRequest(null, { query: '?x' })).status).toBe(400)
  })
})

describe('forward-auth (Caddy, Traefik)', () => {
  it('not signed in: 302 to the hosted sign-in page with returnTo for GET and HEAD, 401 otherwise', async () => {
    for (const method of ['GET', 'HEAD', 'get']) {
      const r = await forwardAuth('https://app.lan:8443/a/b?c=d&e', { method })
      expect(r.status, method).toBe(302)
      expect(r.headers.location).toBe(`${server.base}/ui/sign-in?returnTo=${encodeURIComponent('https://app.lan:8443/a/b?c=d&e')}`)
      expect(remote(r)).toEqual({})
    }
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const r = await forwardAuth('https://app.lan/a', { method })
      expect(r.status, method).toBe(401)
      expect(r.headers.location).toBeUndefined()
    }
  })

  it('signed in: the same answers as auth-request', async () => {
    const s = await signedIn({ name: 'Ünïcode' })
    const ok = await forwardAuth('https://app.lan/', { cookie: s.cookie })
    expect(ok.status).toBe(200)
    expect(remote(ok)).toEqual({ 'remote-user': s.email, 'remote-email': s.email, 'remote-name': 'Ünïcode', 'remote-groups': 'user' })
    const bypass = await forwardAuth('https://public.lan/', { cookie: s.cookie })
    expect(bypass.status).toBe(200)
    expect(remote(bypass)).toEqual({})
    expect((await forwardAuth('https://closed.lan/', { cookie: s.cookie })).status).toBe(403)
    expect((await forwardAuth('https://closed.lan/', { cookie: s.cookie, method: 'POST' })).status).toBe(403)
  })

  it('reads only X-Forwarded-*: a missing part or a malformed one is 400, X-Original-URL is ignored', async () => {
    const s = await signedIn()
    const only = await rawRequest(`${server.base}/forward-auth/forward-auth`, {
      headers: { cookie: s.cookie, 'x-original-url': 'https://app.lan/', 'x-original-method': 'GET' },
    })
    expect(only.status).toBe(400)
    expect(errorOf(only).code).toBe('MISSING_ORIGINAL_URL')
    const base = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.lan', 'x-forwarded-uri': '/', cookie: s.cookie }
    for (const drop of ['x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-uri'] as const) {
      const headers: Record<string, string> = { ...base }
      delete headers[drop]
      expect((await rawRequest(`${server.base}/forward-auth/forward-auth`, { headers })).status, drop).toBe(400)
    }
    for (const [name, value] of [
      ['x-forwarded-proto', 'ftp'],
      ['x-forwarded-host', 'evil.lan/x'],
      ['x-forwarded-uri', 'no-slash'],
    ] as const) {
      const r = await rawRequest(`${server.base}/forward-auth/forward-auth`, { headers: { ...base, [name]: value } })
      expect(r.status, name).toBe(400)
      expect(errorOf(r).code).toBe('INVALID_ORIGINAL_URL')
    }
  })
})

describe('two-factor policy', () => {
  it('401 for a session without a second factor (302 on forward-auth); 200 once signed in through the second step', async () => {
    const s = await signedIn()
    const refused = await authRequest('https://mfa.lan/', { cookie: s.cookie })
    expect(refused.status).toBe(401)
    expect(errorOf(refused).code).toBe('SECOND_FACTOR_REQUIRED')
    expect((await forwardAuth('https://mfa.lan/', { cookie: s.cookie })).status).toBe(302)

    // Enrol TOTP on that session: the session itself did not pass a second factor at sign-in.
    const enable = await s.client.post<{ totpURI: string }>('/two-factor/enable', { password: PASSWORD })
    expect(enable.status).toBe(200)
    const totp = URI.parse(enable.body.totpURI) as TOTP
    const first = await s.client.post('/two-factor/verify-totp', { code: totp.generate({ timestamp: server.clock.now() }) })
    expect(first.status).toBe(200)
    expect((await authRequest('https://mfa.lan/', { cookie: s.client.jar.header() })).status).toBe(401)
    server.clock.advanceSeconds(30)

    const fresh = new HttpClient(server.base)
    const step1 = await fresh.post<{ twoFactorRedirect?: boolean }>('/sign-in/email', { email: s.email, password: PASSWORD })
    expect(step1.body.twoFactorRedirect).toBe(true)
    expect((await authRequest('https://mfa.lan/', { cookie: fresh.jar.header() })).status).toBe(401)
    const step2 = await fresh.post('/two-factor/verify-totp', { code: totp.generate({ timestamp: server.clock.now() }), trustDevice: true })
    expect(step2.status).toBe(200)
    const ok = await authRequest('https://mfa.lan/', { cookie: fresh.jar.header() })
    expect(ok.status).toBe(200)
    expect(remote(ok)['remote-email']).toBe(s.email)

    // A trusted browser skips the step: its session counts as having passed it.
    const trusted = new HttpClient(server.base)
    for (const [name, value] of fresh.jar.cookies) if (name.endsWith('trust_device')) trusted.jar.cookies.set(name, value)
    const again = await trusted.post<{ twoFactorRedirect?: boolean; token?: string }>('/sign-in/email', {
      email: s.email,
      password: PASSWORD,
    })
    expect(again.body.twoFactorRedirect).toBeUndefined()
    expect((await authRequest('https://mfa.lan/', { cookie: trusted.jar.header() })).status).toBe(200)

    // Signing out ends the marker with the session.
    expect((await fresh.post('/sign-out', {})).status).toBe(200)
    expect((await authRequest('https://mfa.lan/', { cookie: fresh.jar.header() })).status).toBe(401)
  })
})

describe('audit', () => {
  it('every refusal is recorded with the URL and the rule; allowed answers only as counts per app and hour', async () => {
    const s = await signedIn()
    await authRequest('https://closed.lan/secret?x=1', { cookie: s.cookie })
    await forwardAuth('https://nowhere.lan/p')
    const rows = await server.gatehouse.ctx.db
      .select()
      .from(auditEvent)
      .where(and(eq(auditEvent.type, 'forward-auth.refused'), eq(auditEvent.outcome, 'failure')))
    const closed = rows.find((r) => (r.detail as { url?: string } | null)?.url === 'https://closed.lan/secret?x=1')
    expect(closed?.actorUserId).toBe(s.user.id)
    expect(closed?.detail).toEqual({ url: 'https://closed.lan/secret?x=1', rule: 'rules[6] closed.lan', status: 403, reason: 'forbidden' })
    const nowhere = rows.find((r) => (r.detail as { url?: string } | null)?.url === 'https://nowhere.lan/p')
    expect(nowhere?.detail).toEqual({ url: 'https://nowhere.lan/p', rule: 'defaultPolicy', status: 401, reason: 'unauthenticated' })

    const before = (await allowedCounts(server.gatehouse.ctx, 1)).find((r) => r.app === 'counted.wild.lan')?.allowed ?? 0
    for (let i = 0; i < 5; i++) expect((await authRequest('https://counted.wild.lan/', { cookie: s.cookie })).status).toBe(200)
    const after = (await allowedCounts(server.gatehouse.ctx, 1)).find((r) => r.app === 'counted.wild.lan')
    expect(after?.allowed).toBe(before + 5)
    expect(rows.some((r) => (r.detail as { url?: string } | null)?.url?.includes('counted.wild.lan'))).toBe(false)
  })
})

describe('hosted sign-in returnTo check', () => {
  it('accepts an http(s) URL without credentials whose host a rule names, nothing else', async () => {
    const ask = async (url: string) =>
      (
        await new HttpClient(server.base).get<{ url: string | null; app: string | null }>(
          `/forward-auth/return-to?url=${encodeURIComponent(url)}`,
        )
      ).body
    expect(await ask('https://app.lan/x?y=1')).toEqual({ url: 'https://app.lan/x?y=1', app: 'app.lan' })
    expect(await ask('http://a.b.wild.lan:8080/')).toEqual({ url: 'http://a.b.wild.lan:8080/', app: 'a.b.wild.lan' })
    for (const url of [
      'https://evil.example/',
      'https://wild.lan/',
      'https://user:pw@app.lan/',
      'javascript:alert(1)',
      '//app.lan/',
      // Whole names only (issue 37): ends with the rule's domain, or starts with it.
      'https://evilapp.lan/',
      'https://app.lan.evil.example/',
      'https://evilwild.lan/',
    ]) {
      expect(await ask(url), url).toEqual({ url: null, app: null })
    }
  })
})

describe('configuration', () => {
  it('off: the endpoints answer 404', async () => {
    const off = await startTestServer()
    try {
      const r = await rawRequest(`${off.base}/forward-auth/auth-request`, { headers: { 'x-original-url': 'https://app.lan/' } })
      expect(r.status).toBe(404)
    } finally {
      await off.close()
    }
  })

  it('a peer outside advanced.ipAddress.trustedProxies gets 403, whatever it sends', async () => {
    const strict = await startTestServer({
      config: { forwardAuth: { enabled: true, defaultPolicy: 'bypass' }, advanced: { ipAddress: { trustedProxies: ['10.1.2.3'] } } },
    })
    try {
      const a = await rawRequest(`${strict.base}/forward-auth/auth-request`, { headers: { 'x-original-url': 'https://app.lan/' } })
      expect(a.status).toBe(403)
      expect(JSON.parse(a.text).code).toBe('UNTRUSTED_PROXY')
      const f = await rawRequest(`${strict.base}/forward-auth/forward-auth`, {
        headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.lan', 'x-forwarded-uri': '/', 'x-forwarded-for': '10.1.2.3' },
      })
      expect(f.status).toBe(403)
    } finally {
      await strict.close()
    }
  })

  it('advanced.crossSubDomainCookies puts Domain on the session cookies (better-auth semantics)', async () => {
    // The base URL's host is under the cookie domain (else the server refuses to start, issue 37 §3);
    // the test reaches it on loopback.
    const port = await freePort()
    const shared = await startTestServer({
      port,
      baseURL: `http://auth.gh.localtest:${port}`,
      config: { advanced: { crossSubDomainCookies: { enabled: true, domain: 'gh.localtest' } } },
    })
    try {
      const client = new HttpClient(`http://127.0.0.1:${port}/api/auth`, { origin: `http://auth.gh.localtest:${port}` })
      const r = await client.post('/sign-up/email', { name: 'C', email: uniqueEmail('xsd'), password: PASSWORD })
      expect(r.status).toBe(200)
      const token = r.cookies.find((c) => c.startsWith('better-auth.session_token='))
      expect(token).toMatch(/; Max-Age=\d+; Domain=gh\.localtest; Path=\/; HttpOnly; SameSite=Lax$/)
    } finally {
      await shared.close()
    }
    const host = await startTestServer({ config: { advanced: { crossSubDomainCookies: { enabled: true } } } })
    try {
      const r = await new HttpClient(host.base).post('/sign-up/email', { name: 'C', email: uniqueEmail('xsd'), password: PASSWORD })
      expect(r.cookies.find((c) => c.startsWith('better-auth.session_token='))).toContain('; Domain=127.0.0.1; ')
    } finally {
      await host.close()
    }
  })
})

describe('the admission rule of every face (core/admission.ts, issue 47 §1)', () => {
  const verifyPage = (url: string) => `${server.base}/ui/verify-email?returnTo=${encodeURIComponent(url)}`

  it('identity.requireVerifiedEmail (default on): an unverified person gets 401 to the verify-email page, then 200 once verified', async () => {
    const up = await signUp(server.base, { password: PASSWORD, name: 'Una Verified' })
    const cookie = up.client.jar.header()
    const r = await authRequest('https://app.lan/x', { cookie })
    expect(r.status).toBe(401)
    expect(errorOf(r)).toEqual({ code: 'EMAIL_NOT_VERIFIED', message: 'Verify your email address to use this application' })
    expect(r.headers.location).toBe(verifyPage('https://app.lan/x'))
    expect(remote(r)).toEqual({})
    // Caddy / Traefik: the browser is sent there.
    const f = await forwardAuth('https://app.lan/x', { cookie })
    expect(f.status).toBe(302)
    expect(f.headers.location).toBe(verifyPage('https://app.lan/x'))
    // Even a deny rule says "verify" first (as it says "sign in" first), and bypass is untouched.
    expect((await authRequest('https://closed.lan/', { cookie })).status).toBe(401)
    expect((await authRequest('https://public.lan/', { cookie })).status).toBe(200)
    const rows = await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.type, 'forward-auth.refused'))
    expect(rows.find((row) => row.actorUserId === up.user.id)?.detail).toEqual({
      url: 'https://app.lan/x',
      rule: 'rules[3] app.lan',
      status: 401,
      reason: 'unverified',
    })

    await markVerified(server, up.user.id)
    const ok = await authRequest('https://app.lan/x', { cookie })
    expect(ok.status).toBe(200)
    expect(remote(ok)).toEqual({
      'remote-user': up.email,
      'remote-email': up.email,
      'remote-name': 'Una Verified',
      'remote-groups': 'user',
    })
  })

  it('with identity.requireVerifiedEmail off, an unverified person is vouched for', async () => {
    const up = await signUp(server.base, { password: PASSWORD })
    const cookie = up.client.jar.header()
    expect((await authRequest('https://app.lan/', { cookie })).status).toBe(401)
    server.gatehouse.config.update({ identity: { requireVerifiedEmail: false } })
    try {
      const r = await authRequest('https://app.lan/', { cookie })
      expect(r.status).toBe(200)
      expect(remote(r)['remote-email']).toBe(up.email)
    } finally {
      server.gatehouse.config.update({ identity: { requireVerifiedEmail: true } })
    }
    expect((await authRequest('https://app.lan/', { cookie })).status).toBe(401)
  })

  it('an anonymous user is not vouched for, whatever identity.requireVerifiedEmail says (anonymous’s faceRefusal)', async () => {
    server.gatehouse.config.update({ anonymous: { enabled: true }, identity: { requireVerifiedEmail: false } })
    try {
      const anonymous = new HttpClient(server.base)
      expect((await anonymous.post('/sign-in/anonymous', {})).status).toBe(200)
      const r = await authRequest('https://app.lan/', { cookie: anonymous.jar.header() })
      expect(r.status).toBe(401)
      expect(errorOf(r).code).toBe('UNAUTHORIZED')
      // A verified person signed in the same way is vouched for meanwhile.
      expect((await authRequest('https://app.lan/', { cookie: (await signedIn()).cookie })).status).toBe(200)
    } finally {
      server.gatehouse.config.update({ anonymous: { enabled: false }, identity: { requireVerifiedEmail: true } })
    }
  })

  it('a session opened past the two-factor enrolment grace is not vouched for until the person enrols (two-factor’s faceRefusal)', async () => {
    // A grace of 0: over at the first sign-in, which still opens a session (to enrol with, issue 49 §10).
    server.gatehouse.config.update({ twoFactor: { enforcement: { roles: ['admin'], gracePeriod: 0 } } })
    try {
      const s = await verifiedSignUp(server, { password: PASSWORD })
      await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: s.user.id, role: 'admin' }, null)
      const late = new HttpClient(server.base)
      const answer = await late.post<{ twoFactorEnrollment?: { overdue?: boolean } }>('/sign-in/email', {
        email: s.email,
        password: PASSWORD,
      })
      expect(answer.status).toBe(200)
      expect(answer.body.twoFactorEnrollment?.overdue).toBe(true)
      // The session stays (to enrol with): the proxy sends the person to the enrolment step, then back.
      const refused = await authRequest('https://app.lan/', { cookie: late.jar.header() })
      expect(refused.status).toBe(401)
      expect(errorOf(refused).code).toBe('TWO_FACTOR_ENROLLMENT_REQUIRED')
      expect(refused.headers.location).toBe(
        `${server.base}/ui/account/two-factor?enrol=1&returnTo=${encodeURIComponent('https://app.lan/')}`,
      )
      expect(remote(refused)).toEqual({})
      // Enrolled (TOTP confirmed), the re-issued session is vouched for.
      const enable = await late.post<{ totpURI: string }>('/two-factor/enable', { password: PASSWORD })
      expect(enable.status).toBe(200)
      const totp = URI.parse(enable.body.totpURI) as TOTP
      expect((await late.post('/two-factor/verify-totp', { code: totp.generate({ timestamp: server.clock.now() }) })).status).toBe(200)
      expect((await authRequest('https://app.lan/', { cookie: late.jar.header() })).status).toBe(200)
    } finally {
      server.gatehouse.config.update({ twoFactor: { enforcement: null } })
    }
  })

  it('an impersonation session is not vouched for: 401 to the sign-in page', async () => {
    const admin = await signedIn()
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: admin.user.id, role: 'admin' }, null)
    const target = await signedIn({ name: 'Target' })
    expect((await authRequest('https://app.lan/', { cookie: target.cookie })).status).toBe(200)
    const imp = await admin.client.post('/admin/impersonate-user', { userId: target.user.id })
    expect(imp.status).toBe(200)
    const r = await authRequest('https://app.lan/', { cookie: admin.client.jar.header() })
    expect(r.status).toBe(401)
    expect(errorOf(r).code).toBe('UNAUTHORIZED')
    expect(r.headers.location).toBe(`${server.base}/ui/sign-in?returnTo=${encodeURIComponent('https://app.lan/')}`)
  })
})
