import { type AdmissionRefusal, refusalNow, standingRefusal } from '../../core/admission.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { recordAudit } from '../../core/audit.js'
import type { ResolvedSession, SessionWithUser } from '../../core/sessions.js'
import { isTrustedProxy } from '../../http/client-ip.js'
import { personOf } from '../groups/person.js'
import { sessionPassedSecondFactor } from '../two-factor/store.js'
import type { ForwardAuthRule } from './config.js'
import { countAllowed } from './counts.js'
import { type Decider, decide, describeDecider, type ForwardTarget, matchRule, type Outcome, type Subject } from './rules.js'

/** Who a session is, for the rules and the Remote-* headers; one object per session until the database changes. */
export interface Identity {
  subject: Subject
  /** Remote-User, Remote-Email, Remote-Name (UTF-8 bytes as a latin1 string), Remote-Groups. */
  headers: readonly (readonly [string, string])[]
  /**
   * The admission rule's reasons that change only with a write (core/admission.ts `standingRefusal`:
   * an API key's session, an impersonation, an anonymous user, an overdue enrolment); the ban and
   * the unverified email are asked at every request (`refusalNow`).
   */
  refusal: AdmissionRefusal | null
}

/**
 * Identities by session object. The session lookup hands out the same object until the database
 * changes (server/core/session-cache.ts: any write empties it, on PostgreSQL after the change
 * signal's sync, across instances), so an identity kept beside that object is exactly as fresh as
 * the session itself: a role, membership or second-factor change comes with a new object. No second
 * change check and, on PostgreSQL, no second sync per request.
 */
const identities = new WeakMap<SessionWithUser, Identity>()

/** A header value as UTF-8 bytes (Node writes header strings as latin1), without control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
const utf8Header = (value: string): string => Buffer.from(value.replace(/[\u0000-\u001f\u007f]/g, ' ').trim(), 'utf8').toString('latin1')

/** Who a person is for the rules, and the Remote-* headers as text (the panel's Test shows these): both from personOf. */
export async function subjectOf(
  ctx: AuthContext,
  user: SessionWithUser['user'],
  passedSecondFactor: boolean,
): Promise<{ subject: Subject; headers: [string, string][] }> {
  const person = await personOf(ctx, user)
  const subject: Subject = {
    roles: person.roles,
    organizations: person.organizations,
    teams: person.teams,
    passedSecondFactor,
  }
  const headers: [string, string][] = [
    ['Remote-User', person.loginName],
    ['Remote-Email', person.email],
    ['Remote-Name', person.name],
    // Comma-separated: no group name holds a separator (slugs, team slugs, role names).
    ['Remote-Groups', person.groups.join(',')],
  ]
  return { subject, headers }
}

async function loadIdentity(ctx: AuthContext, data: SessionWithUser): Promise<Identity> {
  const { subject, headers } = await subjectOf(ctx, data.user, await sessionPassedSecondFactor(ctx, data.session.id))
  const refusal = await standingRefusal(ctx, data)
  return { subject, headers: headers.map(([name, value]) => [name.toLowerCase(), utf8Header(value)] as const), refusal }
}

/** The identity of a live session: kept with the session object (no I/O while it is cached), else read. */
export function identityOf(ctx: AuthContext, data: SessionWithUser): Identity | Promise<Identity> {
  return identities.get(data) ?? fill(ctx, data)
}

async function fill(ctx: AuthContext, data: SessionWithUser): Promise<Identity> {
  const identity = await loadIdentity(ctx, data)
  identities.set(data, identity)
  return identity
}

/** A session counts as live unless its user is banned (an expired ban no longer counts). */
export function liveSession(ctx: AuthContext, resolved: ResolvedSession): SessionWithUser | null {
  if (resolved.status !== 'active') return null
  if (refusalNow(ctx, resolved.data.user) === 'BANNED_USER') return null
  return resolved.data
}

/**
 * What the admission rule (core/admission.ts) makes of a live session: an unverified email goes to
 * the verify-email page (401), any other reason counts as no session (401 to the sign-in page).
 */
function admitted(ctx: AuthContext, live: SessionWithUser, identity: Identity): RefusedOutcome | null {
  if (identity.refusal) return refusedOutcome(identity.refusal)
  return refusalNow(ctx, live.user) === 'EMAIL_NOT_VERIFIED' ? 'unverified' : null
}

export type RefusedOutcome = 'unverified' | 'enrol' | 'unauthenticated'

/**
 * Forward auth's answer to an admission refusal (the endpoint's and the panel's Test): an
 * unverified email goes to the verify-email page, an enrolment past its grace to the enrolment
 * step (the session stays, to enrol with), any other reason counts as no session.
 */
export function refusedOutcome(refusal: AdmissionRefusal): RefusedOutcome {
  if (refusal === 'EMAIL_NOT_VERIFIED') return 'unverified'
  if (refusal === 'TWO_FACTOR_ENROLLMENT_REQUIRED') return 'enrol'
  return 'unauthenticated'
}

/** Trusted-proxy answers per peer address, per trustedProxies list (BlockList's check allocates each call). */
const trustedPeers = new WeakMap<readonly string[], Map<string, boolean>>()
export function fromTrustedProxy(peer: string | undefined, trustedProxies: readonly string[]): boolean {
  if (!peer) return false
  let known = trustedPeers.get(trustedProxies)
  if (!known) {
    known = new Map()
    trustedPeers.set(trustedProxies, known)
  }
  let trusted = known.get(peer)
  if (trusted === undefined) {
    trusted = isTrustedProxy(peer, trustedProxies)
    if (known.size >= 1024) known.clear()
    known.set(peer, trusted)
  }
  return trusted
}

export interface Verdict {
  outcome: Outcome
  decider: Decider
  identity: Identity | null
  userId: string | null
}

/** The decision for one original request: the rule, then (unless bypass) the session and who it is. */
export function judge(
  ctx: AuthContext,
  conf: { rules: readonly ForwardAuthRule[]; defaultPolicy: ForwardAuthRule['policy'] },
  target: ForwardTarget,
  session: () => ResolvedSession | Promise<ResolvedSession>,
): Verdict | Promise<Verdict> {
  const matched = matchRule(conf, target)
  if (matched.policy === 'bypass') return { outcome: 'bypass', decider: matched.decider, identity: null, userId: null }
  const withSession = (resolved: ResolvedSession): Verdict | Promise<Verdict> => {
    const live = liveSession(ctx, resolved)
    if (!live) return { outcome: decide(matched, null), decider: matched.decider, identity: null, userId: null }
    const withIdentity = (identity: Identity): Verdict => {
      const refused = admitted(ctx, live, identity)
      if (refused) return { outcome: refused, decider: matched.decider, identity: null, userId: live.user.id }
      return { outcome: decide(matched, identity.subject), decider: matched.decider, identity, userId: live.user.id }
    }
    const identity = identityOf(ctx, live)
    return identity instanceof Promise ? identity.then(withIdentity) : withIdentity(identity)
  }
  const resolved = session()
  return resolved instanceof Promise ? resolved.then(withSession) : withSession(resolved)
}

/** Allowed answers are counted (per app and hour); refusals are audited with the URL and the rule. */
/** `meta` is asked only for a refusal (the client address costs a header parse and a proxy check). */
export function record(ctx: AuthContext, target: ForwardTarget, verdict: Verdict, meta: () => RequestMeta): Promise<void> | undefined {
  if (verdict.outcome === 'allowed' || verdict.outcome === 'bypass') {
    countAllowed(ctx, target.host)
    return undefined
  }
  return recordAudit(ctx, {
    type: 'forward-auth.refused',
    outcome: 'failure',
    actorUserId: verdict.userId,
    target: target.host,
    detail: {
      url: target.url,
      rule: describeDecider(verdict.decider),
      status: verdict.outcome === 'forbidden' ? 403 : 401,
      reason: verdict.outcome,
    },
    meta: meta(),
  })
}
