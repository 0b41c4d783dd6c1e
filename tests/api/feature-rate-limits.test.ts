/**
 * A feature's own rate-limit rules (issue 26 §2): two-factor declares better-auth's 3 per 10 s on
 * every /two-factor/ path, passkey gives its sign-in the strict rule of /sign-in. Neither comes from
 * config; `rateLimit.customRules` still win over them, and other paths keep the default rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient } from '../helpers/http.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

async function statuses(client: HttpClient, path: string, times: number, body: unknown = {}): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < times; i++) out.push((await client.post(path, body)).status)
  return out
}

describe('rate-limit rules declared by features', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({
      config: {
        rateLimit: { enabled: true, customRules: { '/two-factor/send-otp': { window: 10, max: 6 } } },
        twoFactor: { enabled: true },
        passkey: { enabled: true },
      },
    })
  })
  afterAll(() => server.close())

  it('two-factor paths: 3 per 10 s per client and path, like better-auth twoFactor; the window restarts', async () => {
    const client = new HttpClient(server.base, { headers: { 'x-forwarded-for': '203.0.113.71' } })
    const verify = await statuses(client, '/two-factor/verify-totp', 4, { code: '123456' })
    expect(verify.slice(0, 3).every((s) => s !== 429)).toBe(true)
    expect(verify[3]).toBe(429)
    // Another path of the feature has its own count.
    expect((await client.post('/two-factor/verify-backup-code', { code: 'aaaaa-bbbbb' })).status).not.toBe(429)
    server.clock.advanceSeconds(11)
    expect((await client.post('/two-factor/verify-totp', { code: '123456' })).status).not.toBe(429)
  })

  it('a custom rule in config wins over the feature rule', async () => {
    const client = new HttpClient(server.base, { headers: { 'x-forwarded-for': '203.0.113.72' } })
    const sent = await statuses(client, '/two-factor/send-otp', 7)
    expect(sent.slice(0, 6).every((s) => s !== 429)).toBe(true)
    expect(sent[6]).toBe(429)
  })

  it('passkey sign-in gets the strict rule; its options endpoint keeps the default', async () => {
    const client = new HttpClient(server.base, { headers: { 'x-forwarded-for': '203.0.113.73' } })
    const signIns = await statuses(client, '/passkey/verify-authentication', 4, { response: { id: 'x' } })
    expect(signIns.slice(0, 3).every((s) => s !== 429)).toBe(true)
    expect(signIns[3]).toBe(429)
    const options: number[] = []
    for (let i = 0; i < 10; i++) options.push((await client.get('/passkey/generate-authenticate-options')).status)
    expect(options.every((s) => s === 200)).toBe(true)
  })
})
