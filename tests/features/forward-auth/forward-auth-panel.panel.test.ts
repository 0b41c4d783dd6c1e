import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiURLOf } from '../../../server/panel/index.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { rawRequest } from '../../helpers/http.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/** The "Protected apps" operations through the panel service (no browser): rules, snippets, the Test box. */

let server: TestServer
let panel: PanelService

beforeAll(async () => {
  server = await startTestServer()
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: apiURLOf(server.gatehouse),
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
})
afterAll(() => server?.close())

async function data<T = Record<string, unknown>>(name: string, input: unknown = {}): Promise<T> {
  const result = await panel.dispatch(name, input)
  if (!result.ok) throw new Error(`${name}: ${result.error.code} ${result.error.message}`)
  return result.data as T
}

describe('forward auth in the panel', () => {
  it('saves the rules in order (validated), and the endpoints answer from them at once', async () => {
    const rules = [
      { domain: 'wiki.lan', resources: ['^/public/'], policy: 'bypass' },
      { domain: 'wiki.lan', policy: 'signed-in', subject: { roles: ['admin'] } },
    ]
    expect(await data('forwardAuth.save', { enabled: true, defaultPolicy: 'deny', rules })).toEqual({ success: true })
    const got = await data<{
      enabled: boolean
      rules: unknown[]
      snippets: { nginx: string; caddy: string; traefik: string }[]
      endpoints: Record<string, string>
    }>('forwardAuth.get')
    expect(got.enabled).toBe(true)
    expect(got.rules).toEqual(rules)
    expect(got.endpoints.authRequest).toBe(`${server.base}/forward-auth/auth-request`)
    expect(got.snippets[1]?.nginx).toContain(`proxy_pass ${server.base}/forward-auth/auth-request;`)
    expect(got.snippets[1]?.caddy).toContain('request_header -Remote-User')
    expect(got.snippets[1]?.traefik).toContain('Host(`wiki.lan`)')
    const asked = await rawRequest(`${server.base}/forward-auth/auth-request`, {
      headers: { 'x-original-url': 'https://wiki.lan/public/x' },
    })
    expect(asked.status).toBe(200)

    // Reordered: the signed-in rule first now decides /public/ too.
    await data('forwardAuth.save', { enabled: true, defaultPolicy: 'deny', rules: [rules[1], rules[0]] })
    const again = await rawRequest(`${server.base}/forward-auth/auth-request`, {
      headers: { 'x-original-url': 'https://wiki.lan/public/x' },
    })
    expect(again.status).toBe(401)

    const bad = await panel.dispatch('forwardAuth.save', {
      enabled: true,
      defaultPolicy: 'deny',
      rules: [{ domain: 'a.lan', resources: ['('], policy: 'deny' }],
    })
    expect(bad.ok).toBe(false)
    if (!bad.ok) expect(bad.error.message).toMatch(/invalid regular expression/)
  })

  it('the Test box answers what a user gets for a URL and which rule decided', async () => {
    await data('forwardAuth.save', {
      enabled: true,
      defaultPolicy: 'deny',
      rules: [
        { domain: 'app.lan', resources: ['^/admin'], policy: 'signed-in', subject: { roles: ['admin'] } },
        { domain: 'app.lan', resources: ['^/mfa'], policy: 'two-factor' },
        { domain: 'app.lan', policy: 'signed-in' },
      ],
    })
    const who = await verifiedSignUp(server, { name: 'Tess' })
    const test = (input: Record<string, unknown>) =>
      data<{ status: number; outcome: string; rule: string | null; headers: Record<string, string> }>('forwardAuth.test', input)
    expect(await test({ url: 'https://app.lan/' })).toEqual({
      status: 401,
      outcome: 'unauthenticated',
      rule: 'rules[2] app.lan',
      headers: {},
    })
    expect(await test({ url: 'https://app.lan/', email: who.email })).toEqual({
      status: 200,
      outcome: 'allowed',
      rule: 'rules[2] app.lan',
      headers: { 'Remote-User': who.email, 'Remote-Email': who.email, 'Remote-Name': 'Tess', 'Remote-Groups': 'user' },
    })
    // The very headers the endpoint sends (the one group rule: member roles and teams too).
    const org = await who.client.post<{ id: string }>('/organization/create', { name: 'Panel Org', slug: 'panel-org' })
    expect(org.status).toBe(200)
    const cookie = who.client.jar.header()
    const real = await rawRequest(`${server.base}/forward-auth/auth-request`, { headers: { 'x-original-url': 'https://app.lan/', cookie } })
    expect(real.status).toBe(200)
    expect(real.headers['remote-groups']).toBe('user,panel-org,panel-org:owner,panel-org/panel-org')
    expect((await test({ url: 'https://app.lan/', email: who.email })).headers).toEqual({
      'Remote-User': who.email,
      'Remote-Email': who.email,
      'Remote-Name': 'Tess',
      'Remote-Groups': real.headers['remote-groups'],
    })
    expect(await test({ url: 'https://app.lan/admin', email: who.email })).toMatchObject({
      status: 403,
      outcome: 'forbidden',
      rule: 'rules[0] app.lan',
    })
    expect(await test({ url: 'https://app.lan/mfa', email: who.email })).toMatchObject({ status: 401, outcome: 'second-factor' })
    expect(await test({ url: 'https://app.lan/mfa', email: who.email, secondFactor: true })).toMatchObject({
      status: 200,
      outcome: 'allowed',
    })
    expect(await test({ url: 'https://other.lan/', email: who.email })).toMatchObject({ status: 403, rule: 'defaultPolicy' })
    expect(await test({ url: 'not a url' })).toMatchObject({ status: 400, outcome: 'invalid-url' })
    expect(await test({ url: 'https://app.lan/', email: 'nobody@example.com' })).toMatchObject({ outcome: 'unknown-user' })
  })
})
