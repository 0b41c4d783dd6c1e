import { canonicalGroupName, teamGroupName } from '../groups/names.js'
import type { NamedGroup, NamedRole } from '../../feature.js'
import type { ForwardAuthPolicy, ForwardAuthRule } from './config.js'

/**
 * Forward auth's decision, as pure functions of the configuration, the original request and who
 * asks (no I/O): which rule applies to a URL, and what the proxy is told.
 */

/** The original request as the rules see it. */
export interface ForwardTarget {
  /** The URL as the proxy sent it (absolute), for returnTo and the audit log. */
  url: string
  /** Lower case, without the port. */
  host: string
  /**
   * The path percent-decoded once with dot segments resolved and repeated slashes merged, without the query; null when it
   * holds a malformed escape (a deny).
   */
  path: string | null
}

/**
 * The original URL from its parts, or null when it is not an absolute http(s) URL with a host.
 * `new URL` lower-cases the host, drops a default port and resolves dot segments (`%2e` ones too);
 * the path is then decoded once and resolved again, so `/public/..%2Fadmin` is seen as `/admin`.
 */
export function parseTarget(raw: string): ForwardTarget | null {
  const fast = plainTarget(raw)
  if (fast) return fast
  if (!/^https?:\/\/[^/?#\\]/i.test(raw)) return null
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return null
  }
  if (!url.hostname || url.username || url.password) return null
  const host = url.hostname.startsWith('[') ? url.hostname : url.hostname.replace(/\.$/, '')
  return { url: url.href, host, path: decodePath(url.pathname) }
}

/**
 * The common case without the URL parser (a proxy asks on every request): a plain host name (its
 * last label not numeric, no punycode), an optional non-default port, and a path and query of
 * characters the WHATWG parser leaves as they are, with no escape and no dot segment. Gives exactly
 * what `new URL` would (tests/features/forward-auth/forward-auth-rules.test.ts compares them); anything else: null.
 */
const PLAIN =
  /^(https?):\/\/((?:[a-z0-9-]+\.)*[a-z][a-z0-9-]*)(?::([1-9]\d{0,4}))?(\/[\w\-.~!$&'()*+,;=:@/]*)?(\?[\w\-.~!$&()*+,;=:@/?%]*)?$/i
export function plainTarget(raw: string): ForwardTarget | null {
  const m = PLAIN.exec(raw)
  if (!m) return null
  const scheme = (m[1] as string).toLowerCase()
  const host = (m[2] as string).toLowerCase()
  const port = m[3]
  const path = m[4] ?? '/'
  if (host.includes('xn--') || host.startsWith('-') || host.includes('.-') || host.includes('-.')) return null
  if (port && (Number(port) > 65535 || port === (scheme === 'https' ? '443' : '80'))) return null
  if (/\/\.\.?(?:\/|$)/.test(path) || path.includes('//')) return null
  return { url: `${scheme}://${host}${port ? `:${port}` : ''}${path}${m[5] ?? ''}`, host, path }
}

/** `X-Forwarded-Proto` + `X-Forwarded-Host` + `X-Forwarded-Uri` as one URL (null: missing or malformed). */
export function forwardedUrl(proto: string | null, host: string | null, uri: string | null): string | null {
  if (!proto || !host || !uri) return null
  const scheme = proto.split(',')[0]?.trim().toLowerCase()
  const name = host.split(',')[0]?.trim()
  if ((scheme !== 'http' && scheme !== 'https') || !name || /[/\\?#@\s]/.test(name) || !uri.startsWith('/') || uri.startsWith('//'))
    return null
  return `${scheme}://${name}${uri}`
}

/** Percent-decodes once, resolves `.` and `..` and merges repeated slashes; null on a malformed escape (or invalid UTF-8). */
export function decodePath(encoded: string): string | null {
  let decoded: string
  try {
    decoded = decodeURIComponent(encoded)
  } catch {
    return null
  }
  const out: string[] = []
  const segments = decoded.split('/')
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as string
    const last = i === segments.length - 1
    if (segment === '.' || segment === '..') {
      if (segment === '..' && out.length > 1) out.pop()
      if (last) out.push('')
      continue
    }
    out.push(segment)
  }
  // Empty segments merged (`//admin` is `/admin`): nginx's merge_slashes, Go's path.Clean and most
  // routers serve it as /admin, so a rule on ^/admin must see it so.
  const path = out.join('/').replace(/\/{2,}/g, '/')
  return path.startsWith('/') ? path : `/${path}`
}

/** `app.example.lan` matches itself; `*.example.lan` any name under example.lan, not example.lan itself. */
export function domainMatches(pattern: string, host: string): boolean {
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1
  return pattern === host
}

/** Compiled resources, per rule object (the configuration is replaced on every change). */
const compiled = new WeakMap<ForwardAuthRule, RegExp[]>()
function resourcesOf(rule: ForwardAuthRule): RegExp[] | undefined {
  if (!rule.resources) return undefined
  let list = compiled.get(rule)
  if (!list) {
    list = rule.resources.map((source) => new RegExp(source))
    compiled.set(rule, list)
  }
  return list
}

/** What decided: a rule by its position in `forwardAuth.rules`, or the default policy. */
export type Decider = { kind: 'rule'; index: number; rule: ForwardAuthRule } | { kind: 'default' } | { kind: 'malformed-path' }

export interface Matched {
  policy: ForwardAuthPolicy
  decider: Decider
}

/** The first rule whose domain and resources match, else the default policy; a malformed path is a deny. */
export function matchRule(conf: { rules: readonly ForwardAuthRule[]; defaultPolicy: ForwardAuthPolicy }, target: ForwardTarget): Matched {
  if (target.path === null) return { policy: 'deny', decider: { kind: 'malformed-path' } }
  const path = target.path
  for (let index = 0; index < conf.rules.length; index++) {
    const rule = conf.rules[index] as ForwardAuthRule
    if (!domainMatches(rule.domain, target.host)) continue
    const resources = resourcesOf(rule)
    if (resources && !resources.some((r) => r.test(path))) continue
    return { policy: rule.policy, decider: { kind: 'rule', index, rule } }
  }
  return { policy: conf.defaultPolicy, decider: { kind: 'default' } }
}

/** Who asks, as far as the rules care. Null: no live session. */
export interface Subject {
  roles: readonly string[]
  organizations: readonly string[]
  /** `organization-slug/team-slug` (groups/names.ts teamGroupName): a team name alone is not unique (anyone may create an organization with a team "ops"). */
  teams: readonly string[]
  passedSecondFactor: boolean
}

export type Outcome =
  /** 200 without Remote-* headers. */
  | 'bypass'
  /** 200 with Remote-* headers. */
  | 'allowed'
  /** 401: no live session. */
  | 'unauthenticated'
  /** 401: the rule needs a second factor this session has not passed. */
  | 'second-factor'
  /** 401: the person's email is not verified (`identity.requireVerifiedEmail`): to the verify-email page. */
  | 'unverified'
  /** 401: the person's second-factor enrolment is overdue (two-factor enforcement): to the hosted enrolment page. */
  | 'enrol'
  /** 403: signed in, but deny or the subject requirement is not met. */
  | 'forbidden'

const someOf = (wanted: readonly string[] | undefined, held: readonly string[]): boolean =>
  wanted === undefined || wanted.some((w) => held.includes(w))

/** Whether a signed-in subject meets a rule's `subject` requirement. */
export function meetsSubject(requirement: ForwardAuthRule['subject'], who: Subject): boolean {
  if (!requirement) return true
  return (
    someOf(requirement.roles, who.roles) &&
    someOf(requirement.organizations, who.organizations) &&
    someOf(requirement.teams && teamsWanted(requirement), who.teams)
  )
}

/**
 * The teams a requirement names, as group names (`slug/team-slug`): `acme/ops` is that team; a bare
 * `ops` is the team of that name in one of the requirement's organizations (the config refuses a bare
 * name without them), never a team of that name in an organization someone else created. A team
 * written by its display name (`acme/Release Ops`) is the same team (canonicalGroupName).
 */
function teamsWanted(requirement: NonNullable<ForwardAuthRule['subject']>): string[] {
  let wanted = wantedTeams.get(requirement)
  if (!wanted) {
    const { teams = [], organizations = [] } = requirement
    wanted = teams.flatMap((t) =>
      t.includes('/') ? [canonicalGroupName(t)] : organizations.flatMap((slug) => teamGroupName(slug, t) ?? []),
    )
    wantedTeams.set(requirement, wanted)
  }
  return wanted
}
/** Per requirement object, as `compiled` (the configuration is replaced on every change). */
const wantedTeams = new WeakMap<NonNullable<ForwardAuthRule['subject']>, string[]>()

/**
 * The issue's order of decision: bypass → 200 without Remote-*, signed in or not; no live session
 * → 401 (even on deny); two-factor without a passed second factor → 401; deny or subject not met → 403.
 */
export function decide(matched: Matched, who: Subject | null): Outcome {
  if (matched.policy === 'bypass') return 'bypass'
  if (!who) return 'unauthenticated'
  if (matched.policy === 'deny') return 'forbidden'
  if (matched.policy === 'two-factor' && !who.passedSecondFactor) return 'second-factor'
  if (matched.decider.kind === 'rule' && !meetsSubject(matched.decider.rule.subject, who)) return 'forbidden'
  return 'allowed'
}

/** The rule as the audit log and the panel name it. */
export function describeDecider(decider: Decider): string {
  if (decider.kind === 'default') return 'defaultPolicy'
  if (decider.kind === 'malformed-path') return 'malformed path'
  return `rules[${decider.index}] ${decider.rule.domain}`
}

/**
 * The group names the rules require, each where it is written: their organizations are reserved
 * (organization/slugs.ts) and a missing one is a warning. A bare team is named in each of the
 * requirement's organizations by its group name (teamGroupName), as teamsWanted reads it; one with
 * no letter or digit names no group, and matches no one.
 */
export function rulesNamedGroups(rules: readonly ForwardAuthRule[]): NamedGroup[] {
  return rules.flatMap((rule, index) => {
    const { organizations = [], teams = [] } = rule.subject ?? {}
    const at = `forwardAuth.rules[${index}].subject`
    return [
      ...organizations.map((name) => ({ where: `${at}.organizations`, name })),
      ...teams.flatMap((team) =>
        team.includes('/')
          ? [{ where: `${at}.teams`, name: team }]
          : organizations.flatMap((slug) => {
              const name = teamGroupName(slug, team)
              return name ? [{ where: `${at}.teams`, name }] : []
            }),
      ),
    ]
  })
}

/** The roles the rules require (`subject.roles`), each where it is written: removing such a role asks first (groups/claims.ts roleChangeImpact). */
export function rulesNamedRoles(rules: readonly ForwardAuthRule[]): NamedRole[] {
  return rules.flatMap((rule, index) =>
    (rule.subject?.roles ?? []).map((name) => ({ where: `forwardAuth.rules[${index}].subject.roles`, name })),
  )
}
