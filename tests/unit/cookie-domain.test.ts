import { describe, expect, it } from 'vitest'
import { configSchema } from '../../server/config-schema.js'
import { describeConfigError } from '../../server/config/schema.js'
import { ConfigStore } from '../../server/config/store.js'
import { cookieDomainIssue } from '../../server/http/cookies.js'
import { freePort } from '../helpers/engines.js'
import { createPanelService } from '../../server/panel/service.js'
import { silentLogger, startTestServer } from '../helpers/server.js'

/**
 * Issue 37 §3: `advanced.crossSubDomainCookies.domain` is checked against the Public Suffix List
 * (tldts): a suffix browsers refuse as a cookie Domain is a configuration error naming the field;
 * and a base URL outside the domain (a silent sign-in loop) refuses to start, the fix in the message.
 */

const withDomain = (domain: string) => ({ advanced: { crossSubDomainCookies: { enabled: true, domain } } })
const problem = (domain: string) => {
  const parsed = configSchema.safeParse(withDomain(domain))
  return parsed.success ? null : describeConfigError(parsed.error)
}

describe('the cookie domain', () => {
  it.each(['home.arpa', 'lan', 'internal', 'localhost', 'co.uk', 'github.io', 'com', '.home.arpa', '127.0.0.1'])(
    '%s is refused, naming the field',
    (domain) => {
      expect(problem(domain)).toBe(
        `advanced.crossSubDomainCookies.domain: "${domain}" is a public suffix (or an address): browsers drop cookies set for it; use a name under a domain you own (lan.example.com) or under .internal / .lan (example.internal, example.lan)`,
      )
      // The same line when the server starts with it.
      expect(() => new ConfigStore(null, withDomain(domain))).toThrow(/^configuration: advanced\.crossSubDomainCookies\.domain: /)
    },
  )

  it.each(['example.lan', 'example.internal', 'lan.example.com', 'house.home.arpa', 'example.co.uk', '.example.lan', 'gh.localtest'])(
    '%s is accepted',
    (domain) => {
      expect(problem(domain)).toBeNull()
    },
  )

  it('the base URL must be the domain or under it', () => {
    const config = configSchema.parse(withDomain('example.lan'))
    expect(cookieDomainIssue(config, 'https://auth.example.lan/api/auth')).toBeNull()
    expect(cookieDomainIssue(config, 'https://example.lan/api/auth')).toBeNull()
    expect(cookieDomainIssue(config, 'https://AUTH.Example.LAN:8443/api/auth')).toBeNull()
    // Merely ending with the same letters is not under it.
    expect(cookieDomainIssue(config, 'https://auth.myexample.lan/api/auth')).toEqual({
      path: 'advanced.crossSubDomainCookies.domain',
      message:
        '"example.lan" does not cover the base URL\'s host "auth.myexample.lan" (browsers would drop every cookie: sign-in would never stick): serve Gatehouse under it (--base-url https://auth.example.lan) or set the domain to a parent of "auth.myexample.lan"',
    })
    expect(cookieDomainIssue(config, 'http://127.0.0.1:4280/api/auth')?.path).toBe('advanced.crossSubDomainCookies.domain')
    // Off, or no domain of its own (the base URL's host): nothing to check.
    expect(cookieDomainIssue(configSchema.parse({}), 'http://127.0.0.1:4280/api/auth')).toBeNull()
    expect(
      cookieDomainIssue(configSchema.parse({ advanced: { crossSubDomainCookies: { enabled: true } } }), 'http://127.0.0.1:4280/api/auth'),
    ).toBeNull()
  })

  it('a server whose base URL is outside the cookie domain refuses to start, one line naming the field', async () => {
    const port = await freePort()
    await expect(startTestServer({ port, baseURL: `http://auth.other.lan:${port}`, config: withDomain('example.lan') })).rejects.toThrow(
      'configuration: advanced.crossSubDomainCookies.domain: "example.lan" does not cover the base URL\'s host "auth.other.lan"',
    )
    // Under it: it starts.
    const started = await startTestServer({ port, baseURL: `http://auth.example.lan:${port}`, config: withDomain('example.lan') })
    await started.close()
    // The panel refuses a change that would leave the base URL outside (start-up values would win
    // over the panel's layer, so this server sets none).
    const fine = await startTestServer({ port, baseURL: `http://auth.example.lan:${port}` })
    try {
      const panel = createPanelService({
        gatehouse: fine.gatehouse,
        apiURL: () => fine.base,
        mode: 'browser',
        version: 'test',
        startedAt: Date.now(),
        logger: silentLogger,
      })
      const validate = async (domain: string) => {
        const answer = await panel.dispatch('settings.validate', { patch: withDomain(domain) })
        if (!answer.ok) throw new Error(answer.error.message)
        return answer.data as { valid: boolean; issues: Array<{ path: string; message: string }> }
      }
      expect((await validate('other.lan')).issues).toEqual([
        {
          path: 'advanced.crossSubDomainCookies.domain',
          message: expect.stringContaining('"other.lan" does not cover the base URL\'s host "auth.example.lan"'),
        },
      ])
      expect((await validate('home.arpa')).issues[0]?.message).toContain('"home.arpa" is a public suffix')
      expect((await validate('auth.example.lan')).valid).toBe(true)
      expect((await validate('example.lan')).valid).toBe(true)
      const refused = await panel.dispatch('settings.update', { patch: withDomain('other.lan') })
      expect(refused.ok).toBe(false)
      expect(fine.gatehouse.ctx.config().advanced.crossSubDomainCookies.domain).toBeUndefined()
    } finally {
      await fine.close()
    }
  })
})
