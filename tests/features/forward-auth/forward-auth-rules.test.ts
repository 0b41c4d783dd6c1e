import { describe, expect, it } from 'vitest'
import { configSchema } from '../../../server/config-schema.js'
import { describeConfigError } from '../../../server/config/schema.js'
import { type ForwardAuthRule, forwardAuthConfig } from '../../../server/features/forward-auth/config.js'
import {
  decide,
  decodePath,
  domainMatches,
  forwardedUrl,
  matchRule,
  parseTarget,
  plainTarget,
  rulesNamedGroups,
  type Subject,
} from '../../../server/features/forward-auth/rules.js'

const conf = (rules: unknown[], defaultPolicy?: string) => forwardAuthConfig.parse({ enabled: true, rules, defaultPolicy })
const target = (url: string) => {
  const t = parseTarget(url)
  if (!t) throw new Error(`unparsable ${url}`)
  return t
}
const policyOf = (c: ReturnType<typeof conf>, url: string) => matchRule(c, target(url)).policy
const ruleIndex = (c: ReturnType<typeof conf>, url: string) => {
  const d = matchRule(c, target(url)).decider
  return d.kind === 'rule' ? d.index : d.kind
}

const who = (over: Partial<Subject> = {}): Subject => ({
  roles: ['user'],
  organizations: [],
  teams: [],
  passedSecondFactor: false,
  ...over,
})

describe('forward auth config', () => {
  it('a bare team name needs organizations (any user may create an organization with a team of that name)', () => {
    const rule = (subject: unknown) => forwardAuthConfig.safeParse({ rules: [{ domain: 'a.lan', policy: 'signed-in', subject }] })
    const refused = rule({ teams: ['ops'] })
    expect(refused.success).toBe(false)
    expect(JSON.stringify(refused.error?.issues)).toContain('organization-slug/team name')
    expect(rule({ teams: ['acme/ops'] }).success).toBe(true)
    expect(rule({ organizations: ['acme'], teams: ['ops'] }).success).toBe(true)
  })

  it('defaults: off, no rules, deny', () => {
    expect(forwardAuthConfig.parse(undefined)).toEqual({ enabled: false, rules: [], defaultPolicy: 'deny' })
    expect(configSchema.parse({}).forwardAuth).toEqual({ enabled: false, rules: [], defaultPolicy: 'deny' })
  })

  it('lower-cases domains and refuses anything but a host name', () => {
    expect(conf([{ domain: 'App.Example.LAN', policy: 'bypass' }]).rules[0]?.domain).toBe('app.example.lan')
    for (const domain of ['https://app.lan', 'app.lan:8080', 'app.lan/x', '*', '*.', 'a.*.lan', '', 'app..lan']) {
      expect(forwardAuthConfig.safeParse({ rules: [{ domain, policy: 'bypass' }] }).success, domain).toBe(false)
    }
  })

  it('names an invalid regular expression clearly', () => {
    const result = configSchema.safeParse({ forwardAuth: { rules: [{ domain: 'a.lan', resources: ['^/(admin'], policy: 'deny' }] } })
    expect(result.success).toBe(false)
    if (result.success) return
    const message = describeConfigError(result.error)
    expect(message).toMatch(/^forwardAuth\.rules\.0\.resources\.0: invalid regular expression "\^\/\(admin"/)
  })

  it('refuses unknown policies, unknown keys and empty subject lists', () => {
    expect(forwardAuthConfig.safeParse({ rules: [{ domain: 'a.lan', policy: 'one-factor' }] }).success).toBe(false)
    expect(forwardAuthConfig.safeParse({ rules: [{ domain: 'a.lan', policy: 'deny', path: '/' }] }).success).toBe(false)
    expect(forwardAuthConfig.safeParse({ rules: [{ domain: 'a.lan', policy: 'deny', subject: { roles: [] } }] }).success).toBe(false)
    expect(forwardAuthConfig.safeParse({ defaultPolicy: 'allow' }).success).toBe(false)
  })
})

describe('domains', () => {
  it('match exactly or by a leading glob, never the bare name of a glob', () => {
    expect(domainMatches('app.example.lan', 'app.example.lan')).toBe(true)
    expect(domainMatches('app.example.lan', 'x.app.example.lan')).toBe(false)
    expect(domainMatches('*.example.lan', 'app.example.lan')).toBe(true)
    expect(domainMatches('*.example.lan', 'a.b.example.lan')).toBe(true)
    expect(domainMatches('*.example.lan', 'example.lan')).toBe(false)
    expect(domainMatches('*.example.lan', 'badexample.lan')).toBe(false)
  })

  it('are compared case-insensitively with ports ignored', () => {
    const c = conf([{ domain: 'app.example.lan', policy: 'bypass' }])
    expect(policyOf(c, 'http://APP.Example.Lan:8443/x')).toBe('bypass')
    expect(policyOf(c, 'https://app.example.lan./')).toBe('bypass')
    expect(policyOf(c, 'https://other.example.lan/')).toBe('deny')
  })
})

describe('paths', () => {
  it('are decoded once, dot segments resolved, query dropped', () => {
    expect(target('https://a.lan/x/../admin?q=/public').path).toBe('/admin')
    expect(target('https://a.lan/public/%2e%2e/admin').path).toBe('/admin')
    expect(target('https://a.lan/public/..%2Fadmin').path).toBe('/admin')
    expect(target('https://a.lan/%2561dmin').path).toBe('/%61dmin')
    expect(target('https://a.lan/caf%C3%A9').path).toBe('/café')
    expect(target('https://a.lan').path).toBe('/')
    expect(decodePath('/a/b/..')).toBe('/a/')
    expect(decodePath('/../../etc')).toBe('/etc')
    // Repeated slashes (raw or encoded) merged: most servers route //admin as /admin.
    expect(decodePath('//admin')).toBe('/admin')
    expect(decodePath('/%2Fadmin/x//y')).toBe('/admin/x/y')
  })

  it('a malformed escape is a deny, whatever the rules say', () => {
    expect(target('https://a.lan/%zz').path).toBeNull()
    expect(target('https://a.lan/%C3').path).toBeNull()
    const c = conf([{ domain: 'a.lan', policy: 'bypass' }])
    const m = matchRule(c, target('https://a.lan/%zz'))
    expect(m).toEqual({ policy: 'deny', decider: { kind: 'malformed-path' } })
    expect(decide(m, null)).toBe('unauthenticated')
    expect(decide(m, who())).toBe('forbidden')
  })

  it('resources are regular expressions on that path; any one matching is enough', () => {
    const c = conf([
      { domain: 'a.lan', resources: ['^/admin(/.*)?$', '^/settings$'], policy: 'two-factor' },
      { domain: 'a.lan', resources: ['^/public/'], policy: 'bypass' },
      { domain: 'a.lan', policy: 'signed-in' },
    ])
    expect(policyOf(c, 'https://a.lan/admin')).toBe('two-factor')
    expect(policyOf(c, 'https://a.lan/admin/users?x=1')).toBe('two-factor')
    expect(policyOf(c, 'https://a.lan/settings')).toBe('two-factor')
    expect(policyOf(c, 'https://a.lan/administrator')).toBe('signed-in')
    expect(policyOf(c, 'https://a.lan/public/logo.png')).toBe('bypass')
    expect(policyOf(c, 'https://a.lan/public/../admin')).toBe('two-factor')
    expect(policyOf(c, 'https://a.lan/public/%2e%2e/admin')).toBe('two-factor')
    expect(policyOf(c, 'https://a.lan/?next=/public/')).toBe('signed-in')
  })
})

describe('order and default', () => {
  it('the first matching rule wins; none: the default policy', () => {
    const rules: unknown[] = [
      { domain: 'app.lan', policy: 'deny' },
      { domain: '*.lan', policy: 'bypass' },
      { domain: 'app.lan', policy: 'signed-in' },
    ]
    expect(ruleIndex(conf(rules), 'http://app.lan/')).toBe(0)
    expect(ruleIndex(conf(rules), 'http://wiki.lan/')).toBe(1)
    expect(ruleIndex(conf(rules), 'http://lan/')).toBe('default')
    expect(policyOf(conf(rules), 'http://lan/')).toBe('deny')
    expect(policyOf(conf(rules, 'signed-in'), 'http://elsewhere/')).toBe('signed-in')
    expect(policyOf(conf([], 'bypass'), 'http://elsewhere/')).toBe('bypass')
  })
})

describe('decision', () => {
  const ruled = (rule: Partial<ForwardAuthRule>) =>
    matchRule(conf([{ domain: 'a.lan', policy: 'signed-in', ...rule }]), target('http://a.lan/'))

  it('bypass answers 200 signed in or not', () => {
    expect(decide(ruled({ policy: 'bypass', subject: { roles: ['admin'] } }), null)).toBe('bypass')
    expect(decide(ruled({ policy: 'bypass' }), who())).toBe('bypass')
  })

  it('no live session is 401, even on deny; deny signed in is 403', () => {
    for (const policy of ['signed-in', 'two-factor', 'deny'] as const) expect(decide(ruled({ policy }), null)).toBe('unauthenticated')
    expect(decide(ruled({ policy: 'deny' }), who({ passedSecondFactor: true, roles: ['admin'] }))).toBe('forbidden')
  })

  it('two-factor needs a passed second factor (401 before the subject is looked at)', () => {
    const rule = ruled({ policy: 'two-factor', subject: { roles: ['admin'] } })
    expect(decide(rule, who())).toBe('second-factor')
    expect(decide(rule, who({ passedSecondFactor: true }))).toBe('forbidden')
    expect(decide(rule, who({ passedSecondFactor: true, roles: ['admin'] }))).toBe('allowed')
    expect(decide(ruled({ policy: 'signed-in' }), who())).toBe('allowed')
  })

  it('subject: any entry of a list is enough, every list given must hold', () => {
    const rule = ruled({ subject: { roles: ['admin', 'ops'], organizations: ['acme'], teams: ['red', 'blue'] } })
    expect(decide(rule, who({ roles: ['ops'], organizations: ['acme'], teams: ['acme/blue'] }))).toBe('allowed')
    expect(decide(rule, who({ roles: ['user', 'admin'], organizations: ['other', 'acme'], teams: ['acme/red'] }))).toBe('allowed')
    expect(decide(rule, who({ roles: ['user'], organizations: ['acme'], teams: ['acme/red'] }))).toBe('forbidden')
    expect(decide(rule, who({ roles: ['admin'], organizations: [], teams: ['acme/red'] }))).toBe('forbidden')
    // A bare team name is a team of one of the rule's organizations: not a "red" team of another one.
    expect(decide(rule, who({ roles: ['admin'], organizations: ['acme', 'mine'], teams: ['mine/red'] }))).toBe('forbidden')
    // `slug/name` names one team.
    const qualified = ruled({ subject: { teams: ['acme/red'] } })
    expect(decide(qualified, who({ teams: ['acme/red'] }))).toBe('allowed')
    expect(decide(qualified, who({ teams: ['mine/red', 'acme/blue'] }))).toBe('forbidden')
    expect(decide(rule, who({ roles: ['admin'], organizations: ['acme'], teams: [] }))).toBe('forbidden')
    expect(decide(ruled({ subject: { organizations: ['acme'] } }), who({ organizations: ['acme'] }))).toBe('allowed')
  })

  it('subject is a requirement of the first matching rule, not a matching criterion', () => {
    const c = conf([
      { domain: 'a.lan', policy: 'signed-in', subject: { roles: ['admin'] } },
      { domain: 'a.lan', policy: 'signed-in' },
    ])
    const m = matchRule(c, target('http://a.lan/'))
    expect(m.decider.kind === 'rule' && m.decider.index).toBe(0)
    expect(decide(m, who())).toBe('forbidden')
  })
})

describe('the group names a rule requires (reserved slugs, start-up warnings)', () => {
  it('names a bare team by the group name it matches (teamGroupName), in each organization; a qualified one as written', () => {
    const rules = conf([
      { domain: 'a.lan', policy: 'signed-in', subject: { organizations: ['acme', 'beta'], teams: ['Release Ops', 'acme/Ops', '!!!'] } },
    ]).rules
    expect(rulesNamedGroups(rules)).toEqual([
      { where: 'forwardAuth.rules[0].subject.organizations', name: 'acme' },
      { where: 'forwardAuth.rules[0].subject.organizations', name: 'beta' },
      { where: 'forwardAuth.rules[0].subject.teams', name: 'acme/release-ops' },
      { where: 'forwardAuth.rules[0].subject.teams', name: 'beta/release-ops' },
      { where: 'forwardAuth.rules[0].subject.teams', name: 'acme/Ops' },
    ])
    // The names are the groups the rule lets in ('!!!' names no group, and matches no one).
    const m = matchRule(conf([{ domain: 'a.lan', policy: 'signed-in', subject: rules[0]?.subject }]), target('http://a.lan/'))
    expect(decide(m, who({ organizations: ['beta'], teams: ['beta/release-ops'] }))).toBe('allowed')
    expect(decide(m, who({ organizations: ['acme'], teams: ['acme/ops'] }))).toBe('allowed')
  })
})

describe('original URLs', () => {
  it('refuses what is not an absolute http(s) URL with a host and no credentials', () => {
    for (const raw of [
      '',
      '/path',
      'ftp://a.lan/',
      'http://',
      'http:///x',
      'http://user:pw@a.lan/',
      'javascript:alert(1)',
      'http://a b/',
    ]) {
      expect(parseTarget(raw), raw).toBeNull()
    }
  })

  it('builds the forward-auth URL from X-Forwarded-Proto, -Host and -Uri', () => {
    expect(forwardedUrl('https', 'App.lan:8443', '/a?b=c')).toBe('https://App.lan:8443/a?b=c')
    expect(forwardedUrl('HTTP', 'a.lan', '/')).toBe('http://a.lan/')
    expect(forwardedUrl(null, 'a.lan', '/')).toBeNull()
    expect(forwardedUrl('https', null, '/')).toBeNull()
    expect(forwardedUrl('https', 'a.lan', null)).toBeNull()
    expect(forwardedUrl('gopher', 'a.lan', '/')).toBeNull()
    expect(forwardedUrl('https', 'a.lan/evil', '/')).toBeNull()
    expect(forwardedUrl('https', 'user@a.lan', '/')).toBeNull()
    expect(forwardedUrl('https', 'a.lan', 'x')).toBeNull()
    expect(forwardedUrl('https', 'a.lan', '//evil.lan/')).toBeNull()
    expect(target(forwardedUrl('https', 'App.lan:8443', '/a?b=c') as string)).toEqual({
      url: 'https://app.lan:8443/a?b=c',
      host: 'app.lan',
      path: '/a',
    })
  })
})

describe('the plain-URL fast path', () => {
  /** What the WHATWG parser path gives (parseTarget without the fast path). */
  const slow = (raw: string) => {
    const url = new URL(raw)
    return { url: url.href, host: url.hostname, path: decodePath(url.pathname) }
  }

  it('gives exactly what the URL parser gives where it applies, and declines everything else', () => {
    const taken = [
      'https://app.bench.lan/dashboard?tab=1',
      'HTTP://App.Example.LAN:8080/A/b_c-d.e~f',
      'https://a.lan',
      'https://a.lan?',
      'https://a.lan/?q=a%20b&r=/x?y',
      "https://a.lan/!$&'()*+,;=:@",
      'http://localhost:3000/x/',
      'https://a-b.c-d.lan/..x/.y',
    ]
    for (const raw of taken) {
      expect(plainTarget(raw), raw).not.toBeNull()
      expect(plainTarget(raw), raw).toEqual(slow(raw))
    }
    const declined = [
      'https://a.lan/%41',
      'https://a.lan/x/../y',
      'https://a.lan/x/./y',
      'https://a.lan/x/..',
      'https://a.lan//admin',
      'https://a.lan:443/',
      'http://a.lan:80/',
      'https://a.lan:99999/',
      'https://127.0.0.1/',
      'https://a.0x7f/',
      'https://xn--caf-dma.lan/',
      'https://a.lan/ space',
      'https://a.lan/"q"',
      "https://a.lan/?it's",
      'https://a.lan/#frag',
      'https://user@a.lan/',
      'https://a.lan./',
      'https://-a.lan/',
    ]
    for (const raw of declined) expect(plainTarget(raw), raw).toBeNull()
    // Declined is not refused: the parser path still answers them.
    expect(parseTarget('https://a.lan:443/x/../y')).toEqual({ url: 'https://a.lan/y', host: 'a.lan', path: '/y' })
    expect(parseTarget('https://127.0.0.1:8443/%41')).toEqual({ url: 'https://127.0.0.1:8443/%41', host: '127.0.0.1', path: '/A' })
  })
})
