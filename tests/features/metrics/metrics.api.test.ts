import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { metricsListening } from '../../../server/features/metrics/index.js'
import { createClient } from '../../../server/features/oidc-provider/clients.js'
import { HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { type Scrape, scrape } from '../../helpers/metrics.js'
import { startTestServer, type TestServer, testEngine } from '../../helpers/server.js'

let server: TestServer
let metricsURL: string

beforeAll(async () => {
  server = await startTestServer({
    config: {
      metrics: { enabled: true, address: '127.0.0.1:0' },
      // The rate limit on, with a rule of one request per minute on /ok to provoke one refusal.
      rateLimit: { enabled: true, customRules: { '/ok': { window: 60, max: 1 } } },
    },
  })
  const at = await metricsListening(server.gatehouse.ctx)
  if (!at) throw new Error('the metrics listener did not start')
  metricsURL = `http://127.0.0.1:${at.port}/metrics`
})
afterAll(() => server.close())

const requests = (s: Scrape, route: string, method: string, status: string) =>
  s.value('gatehouse_http_requests_total', { route, method, status })

describe('metrics listener', () => {
  it('serves GET /metrics on its own port only; the API port has no /metrics', async () => {
    const api = new URL(server.base)
    expect(metricsURL).not.toContain(`:${api.port}/`)
    const res = await fetch(metricsURL)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const text = await res.text()
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter')
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge')
    for (const path of ['/metrics', '/api/auth/metrics']) expect((await fetch(`${server.origin}${path}`)).status).toBe(404)
    expect((await fetch(metricsURL.replace('/metrics', '/other'))).status).toBe(404)
    expect((await fetch(metricsURL, { method: 'POST' })).status).toBe(404)
    if (testEngine === 'postgres') {
      expect(text).toMatch(/^gatehouse_db_pool_connections\{state="in-use"\} \d+$/m)
      expect(text).toMatch(/^gatehouse_db_pool_connections\{state="waiting"\} \d+$/m)
    } else {
      expect(text).not.toContain('gatehouse_db_pool_connections')
    }
  })

  it("registers each feature's declared counters (Feature metrics): zeros shown, an undeclared label value counted as other", async () => {
    const before = await scrape(metricsURL)
    // Declared with zeros: present before anything is counted.
    for (const outcome of ['issued', 'refused']) expect(before.has('gatehouse_saml_assertions_total', { outcome }), outcome).toBe(true)
    expect(before.has('gatehouse_ldap_searches_total')).toBe(true)
    const events = server.gatehouse.ctx.events
    events.count('gatehouse_oidc_tokens_issued_total', 'password')
    events.count('gatehouse_saml_assertions_total', 'issued')
    // A name no feature declared counts nothing (and registers nothing).
    events.count('gatehouse_nobody_declared_total', 'x')
    const after = await scrape(metricsURL)
    const delta = (name: string, labels: Record<string, string>) => after.value(name, labels) - before.value(name, labels)
    expect(delta('gatehouse_oidc_tokens_issued_total', { grant: 'other' })).toBe(1)
    expect(after.has('gatehouse_oidc_tokens_issued_total', { grant: 'password' })).toBe(false)
    expect(delta('gatehouse_saml_assertions_total', { outcome: 'issued' })).toBe(1)
    expect(after.has('gatehouse_nobody_declared_total')).toBe(false)
  })

  it('moves the counters exactly as the requests did', async () => {
    const before = await scrape(metricsURL)
    const email = uniqueEmail('metrics')
    const { client } = await signUp(server.base, { email, password: 'password123' })
    const signedIn = new HttpClient(server.base)
    expect((await signedIn.post('/sign-in/email', { email, password: 'password123' })).status).toBe(200)
    expect((await new HttpClient(server.base).post('/sign-in/email', { email, password: 'wrong-password' })).status).toBe(401)
    expect((await signedIn.get('/get-session')).status).toBe(200)
    expect((await signedIn.get('/get-session')).status).toBe(200)
    expect((await client.get('/no-such-path/with-a-token-abc123')).status).toBe(404)
    expect((await client.get('/ok')).status).toBe(200)
    expect((await client.get('/ok')).status).toBe(429)
    const after = await scrape(metricsURL)
    const delta = (name: string, labels?: Record<string, string>) => after.value(name, labels) - before.value(name, labels)

    expect(requests(after, '/sign-up/email', 'POST', '200') - requests(before, '/sign-up/email', 'POST', '200')).toBe(1)
    expect(requests(after, '/sign-in/email', 'POST', '200') - requests(before, '/sign-in/email', 'POST', '200')).toBe(1)
    expect(requests(after, '/sign-in/email', 'POST', '401') - requests(before, '/sign-in/email', 'POST', '401')).toBe(1)
    expect(requests(after, '/get-session', 'GET', '200') - requests(before, '/get-session', 'GET', '200')).toBe(2)
    expect(requests(after, '(unmatched)', 'GET', '404') - requests(before, '(unmatched)', 'GET', '404')).toBe(1)
    expect(requests(after, '/ok', 'GET', '200') - requests(before, '/ok', 'GET', '200')).toBe(1)
    expect(requests(after, '/ok', 'GET', '429') - requests(before, '/ok', 'GET', '429')).toBe(1)
    // The raw path of the unknown request appears nowhere; nor does the email.
    expect(after.text).not.toContain('with-a-token')
    expect(after.text).not.toContain(email)
    expect(delta('gatehouse_http_request_duration_seconds_count', { route: '/get-session', method: 'GET' })).toBe(2)
    expect(delta('gatehouse_http_request_duration_seconds_bucket', { route: '/get-session', method: 'GET', le: '+Inf' })).toBe(2)

    // The sign-up's own sign-in counts too: the pipeline reports every sign-in, whatever route began it.
    expect(delta('gatehouse_sign_ins_total', { method: 'email', outcome: 'success' })).toBe(2)
    expect(delta('gatehouse_sign_ins_total', { method: 'email', outcome: 'wrong-credentials' })).toBe(1)
    expect(delta('gatehouse_sign_ins_total')).toBe(3)
    expect(delta('gatehouse_refusals_total', { reason: 'rate-limit' })).toBe(1)
    expect(delta('gatehouse_refusals_total', { reason: 'lockout' })).toBe(0)
    // Two get-session lookups; on SQLite the second is answered from the cache.
    expect(delta('gatehouse_session_cache_lookups_total')).toBe(2)
    if (testEngine === 'sqlite') expect(delta('gatehouse_session_cache_lookups_total', { result: 'hit' })).toBe(1)
    // Sign-up and sign-in each opened a session; one user more.
    expect(delta('gatehouse_users')).toBe(1)
    expect(delta('gatehouse_sessions_active')).toBe(2)
    // No SMTP: nothing was delivered, and the outbox gauge is spelled for every status.
    expect(delta('gatehouse_mail_deliveries_total')).toBe(0)
    for (const status of ['queued', 'sending', 'sent', 'failed'])
      expect(after.text).toMatch(new RegExp(`^gatehouse_mail_outbox_messages\\{status="${status}"\\} \\d+$`, 'm'))
  })

  it('counts a locked account as a lockout refusal and a locked sign-in', async () => {
    await server.gatehouse.config.update({ security: { accountLockout: { maxFailures: 2 } } })
    try {
      const email = uniqueEmail('locked')
      await signUp(server.base, { email, password: 'password123' })
      // A new window of the strict sign-in rate limit (3 per 10 s), so only the lockout refuses.
      server.clock.advanceSeconds(11)
      const before = await scrape(metricsURL)
      const client = new HttpClient(server.base)
      const statuses: number[] = []
      for (let i = 0; i < 2; i++) statuses.push((await client.post('/sign-in/email', { email, password: 'wrong-password' })).status)
      statuses.push((await client.post('/sign-in/email', { email, password: 'password123' })).status)
      expect(statuses).toEqual([401, 401, 429])
      const after = await scrape(metricsURL)
      const delta = (name: string, labels: Record<string, string>) => after.value(name, labels) - before.value(name, labels)
      expect(delta('gatehouse_refusals_total', { reason: 'lockout' })).toBe(1)
      expect(delta('gatehouse_refusals_total', { reason: 'rate-limit' })).toBe(0)
      expect(delta('gatehouse_sign_ins_total', { method: 'email', outcome: 'wrong-credentials' })).toBe(2)
      expect(delta('gatehouse_sign_ins_total', { method: 'email', outcome: 'locked' })).toBe(1)
    } finally {
      await server.gatehouse.config.update({ security: { accountLockout: { maxFailures: 10 } } })
    }
  })

  it('counts OIDC tokens by grant; the mounted provider is counted under (unmatched), never its raw path', async () => {
    await server.gatehouse.config.update({ oidcProvider: { enabled: true } })
    try {
      const { client, clientSecret } = await createClient(
        server.gatehouse.ctx,
        { name: 'Metrics RP', redirectUris: ['https://rp.example.com/callback'] },
        { via: 'cli' },
      )
      const before = await scrape(metricsURL)
      const token = await fetch(`${server.base}/oauth2/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.clientId}:${clientSecret}`).toString('base64')}`,
        },
        body: 'grant_type=client_credentials',
      })
      expect(token.status).toBe(200)
      expect(token.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9_-]+-[0-9a-z]+$/)
      const after = await scrape(metricsURL)
      const delta = (name: string, labels: Record<string, string>) => after.value(name, labels) - before.value(name, labels)
      expect(delta('gatehouse_oidc_tokens_issued_total', { grant: 'client_credentials' })).toBe(1)
      expect(delta('gatehouse_http_requests_total', { route: '(unmatched)', method: 'POST', status: '200' })).toBe(1)
      expect(after.text).not.toContain('/oauth2/token')
      expect(after.text).not.toContain(client.clientId)
    } finally {
      await server.gatehouse.config.update({ oidcProvider: { enabled: false } })
    }
  })

  it('counts forward-auth answers by the rule that decided and the outcome', async () => {
    await server.gatehouse.config.update({
      forwardAuth: {
        enabled: true,
        rules: [
          { domain: 'app.metrics.lan', policy: 'signed-in' },
          { domain: 'open.metrics.lan', policy: 'bypass' },
        ],
      },
    })
    try {
      const ask = (client: HttpClient, url: string) => client.get('/forward-auth/auth-request', { 'x-original-url': url })
      const anonymous = new HttpClient(server.base)
      const { client } = await verifiedSignUp(server)
      const before = await scrape(metricsURL)
      expect((await ask(anonymous, 'https://app.metrics.lan/')).status).toBe(401)
      expect((await ask(anonymous, 'https://open.metrics.lan/')).status).toBe(200)
      expect((await ask(anonymous, 'https://elsewhere.metrics.lan/')).status).toBe(401)
      expect((await ask(client, 'https://app.metrics.lan/')).status).toBe(200)
      expect((await ask(client, 'https://app.metrics.lan/x')).status).toBe(200)
      expect((await ask(client, 'https://elsewhere.metrics.lan/')).status).toBe(403)
      const after = await scrape(metricsURL)
      const moved = (rule: string, outcome: string) =>
        after.value('gatehouse_forward_auth_decisions_total', { rule, outcome }) -
        before.value('gatehouse_forward_auth_decisions_total', { rule, outcome })
      expect(moved('rules[0]', 'unauthenticated')).toBe(1)
      expect(moved('rules[0]', 'allowed')).toBe(2)
      expect(moved('rules[1]', 'bypass')).toBe(1)
      expect(moved('defaultPolicy', 'unauthenticated')).toBe(1)
      expect(moved('defaultPolicy', 'forbidden')).toBe(1)
    } finally {
      await server.gatehouse.config.update({ forwardAuth: { enabled: false, rules: [] } })
    }
  })
})
