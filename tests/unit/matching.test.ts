import { describe, expect, it } from 'vitest'
import { configSchema } from '../../server/config-schema.js'
import { describeInvalidTrustedOrigin, isTrustedURL } from '../../server/config/trusted-origins.js'
import { clientIp, rateLimitIdentity } from '../../server/http/client-ip.js'

const ipConf = configSchema.parse({}).advanced.ipAddress

describe('client IP', () => {
  const headers = (xff?: string) => new Headers(xff ? { 'x-forwarded-for': xff } : {})
  it('believes X-Forwarded-For only from a trusted proxy', () => {
    expect(clientIp('127.0.0.1', headers('203.0.113.1, 10.0.0.1'), ipConf)).toBe('203.0.113.1')
    expect(clientIp('::ffff:127.0.0.1', headers('203.0.113.1'), ipConf)).toBe('203.0.113.1')
    expect(clientIp('198.51.100.9', headers('203.0.113.1'), ipConf)).toBe('198.51.100.9')
    expect(clientIp('127.0.0.1', headers('not-an-ip'), ipConf)).toBe('127.0.0.1')
    expect(clientIp('10.1.2.3', headers('203.0.113.1'), { ...ipConf, trustedProxies: ['10.0.0.0/8'] })).toBe('203.0.113.1')
  })
  it('takes the first configured header holding an address, from a trusted proxy only', () => {
    const conf = { ...ipConf, ipAddressHeaders: ['x-real-ip', 'x-forwarded-for'] }
    const both = new Headers({ 'x-real-ip': 'garbage', 'x-forwarded-for': '203.0.113.7' })
    expect(clientIp('127.0.0.1', both, conf)).toBe('203.0.113.7')
    expect(clientIp('198.51.100.9', both, conf)).toBe('198.51.100.9')
    expect(clientIp('198.51.100.9', new Headers(), conf)).toBe('198.51.100.9')
    // No peer address (not a socket): the header is all there is.
    expect(clientIp(undefined, both, conf)).toBe('203.0.113.7')
    expect(clientIp(undefined, new Headers(), conf)).toBe(null)
  })
  it('groups IPv6 addresses by /64', () => {
    expect(rateLimitIdentity('2001:db8:0:1::5')).toBe('2001:db8:0:1::/64')
    expect(rateLimitIdentity('2001:0db8:0000:0001:ffff:1:2:3')).toBe('2001:db8:0:1::/64')
    expect(rateLimitIdentity('192.0.2.1')).toBe('192.0.2.1')
  })
})

describe('trusted origins', () => {
  const trusted = ['https://app.example.com', '*.example.org', 'myapp://']
  it('matches exact origins, host globs and app-scheme prefixes', () => {
    expect(isTrustedURL('https://app.example.com/x?y=1', trusted, { allowRelative: true })).toBe(true)
    expect(isTrustedURL('https://a.b.example.org/', trusted, { allowRelative: true })).toBe(true)
    expect(isTrustedURL('myapp://done', trusted, { allowRelative: true })).toBe(true)
    expect(isTrustedURL('https://app.example.com:444/', trusted, { allowRelative: true })).toBe(false)
    expect(isTrustedURL('https://example.org.evil.com/', trusted, { allowRelative: true })).toBe(false)
    expect(isTrustedURL('/ok', trusted, { allowRelative: false })).toBe(false)
    expect(isTrustedURL('https://app.example.com\n.evil.com', trusted, { allowRelative: true })).toBe(false)
    expect(isTrustedURL('javascript://a.example.org/%0Aalert(1)', trusted, { allowRelative: true })).toBe(false)
    expect(isTrustedURL('data://a.example.org/x', trusted, { allowRelative: true })).toBe(false)
  })
  it('refuses empty and malformed entries in the config with a reason', () => {
    expect(describeInvalidTrustedOrigin('')).toBe('a trusted origin must not be empty')
    expect(describeInvalidTrustedOrigin('https://a.com/path')).toContain('must be an origin only')
    expect(describeInvalidTrustedOrigin('app.example.com')).toContain('must start with')
    expect(describeInvalidTrustedOrigin('https://a.com')).toBeNull()
    const parsed = configSchema.safeParse({ trustedOrigins: ['https://ok.com', ''] })
    expect(parsed.success).toBe(false)
    expect(parsed.error?.issues[0]?.path).toEqual(['trustedOrigins', 1])
  })
})
