import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Element } from '@xmldom/xmldom'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext } from '../../core/context.js'
import { APIError } from '../../core/errors.js'
import { deleteSessionByToken, findUserSessionById, type SessionWithUser } from '../../core/sessions.js'
import { generateId } from '../../crypto/random.js'
import type { RouteContext } from '../../http/route.js'
import { enrolmentStepURL } from '../../http/sign-in.js'
import { expirePluginCookie, readSignedCookie, setSignedCookie } from '../../http/plugin-cookies.js'
import { clearSessionCookies, requestSessionToken, resolveRequestSession } from '../../http/session.js'
import { rateLimitIdentity } from '../../http/client-ip.js'
import type { Logger } from '../../log.js'
import { NAME_ID_FORMATS } from './config.js'
import { nameIdOf } from './name-id.js'
import { SAML_ERRORS, SamlRefusal } from './errors.js'
import { publishedCertificates, signingKey } from './keys.js'
import { loginResponse, logoutRequest, logoutResponse, type Outgoing, postForm, statusResponse } from './messages.js'
import { chooseAcs, idpMetadataXml, type SpMetadata } from './metadata.js'
import { type ServiceProvider, serviceProviderByEntityId } from './service-providers.js'
import type { SamlRequestRow } from './schema.js'
import { admitToFace } from '../../core/sign-in-table.js'
import { inAllowedGroups } from '../groups/names.js'
import { type Person, personOf } from '../groups/person.js'
import {
  countPendingRequests,
  deleteExpiredRequests,
  deleteParticipants,
  findRequest,
  forgetSessionIndex,
  insertParticipant,
  insertRequest,
  participantsByNameId,
  participantsBySessionIndex,
  participantsOfSession,
  spendRequest,
} from './store.js'
import {
  BINDING,
  child,
  children,
  decode,
  decodePostParam,
  inflateParam,
  NS,
  parseXml,
  rawQueryParams,
  textOf,
  verifyEnvelopedSignature,
  verifyRedirectSignature,
  xsdTrue,
} from './xml.js'
import { hostedPageURL } from '../../http/hosted-page-url.js'

/**
 * The identity provider's HTTP side (mounted under the base path, loaded at the first SAML request):
 *
 * - `GET /saml/metadata`: the IdP's metadata;
 * - `GET|POST /saml/sso`: an AuthnRequest is read, checked (known SP, signature, destination, age,
 *   ACS from the metadata) and stored, then the browser goes to `/saml/continue/<id>` (a top-level
 *   GET, so the session cookie is there whichever binding brought it and whichever instance answers);
 * - `GET /saml/continue/<id>`: no session → the hosted sign-in page and back; a session whose
 *   second-factor enrolment is overdue → the hosted enrolment step and back; a session → the signed
 *   Response, posted to the ACS;
 * - `GET /saml/idp-initiated?sp=<entityID or id>`: the same from the "Connected apps" page;
 * - `GET|POST /saml/slo`: an SP's LogoutRequest ends the session and is answered; a LogoutResponse
 *   continues Gatehouse's own front-channel logout (`GET /saml/logout`).
 *
 * A refusal is audited (`saml.refused`), logged as a warning, and shown on the hosted error page.
 */

/** How long a received request waits for the sign-in. */
const REQUEST_TTL_MS = 10 * 60_000
/** How far a request's IssueInstant may be from our clock. */
const SKEW_MS = 5 * 60_000
const MAX_BODY = 1024 * 1024
/**
 * RelayState is stored while the person signs in and echoed to the SP: at most 1 KiB (SAML bindings
 * 3.4.3 and 3.5.3 say 80 bytes; SPs send more, rarely over a few hundred). A message ID is stored too.
 */
const MAX_RELAY_STATE_BYTES = 1024
const MAX_ID_LENGTH = 256
/**
 * Unauthenticated AuthnRequests waiting for a sign-in, per source (the rate limiter's identity: an
 * IPv4 address, an IPv6 /64): one more is refused, so what a stranger can make Gatehouse store is
 * bounded. They expire after REQUEST_TTL_MS and are swept then.
 */
export const MAX_PENDING_PER_SOURCE = 50
/** How often a request sweeps the expired ones (the background job also does, every minute). */
const SWEEP_EVERY_MS = 60_000

export interface Env {
  logger: Logger
  onAssertion?: (outcome: 'issued' | 'refused') => void
}

const ssoUrl = (ctx: AuthContext): string => `${ctx.baseURL}/saml/sso`
const sloUrl = (ctx: AuthContext): string => `${ctx.baseURL}/saml/slo`
export const idpEntityId = (ctx: AuthContext): string => `${ctx.baseURL}/saml/metadata`

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  res.statusCode = status
  res.setHeader('content-type', type)
  res.setHeader('cache-control', 'no-store')
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v)
  res.setHeader('content-length', Buffer.byteLength(body))
  res.end(body)
}

function redirect(rc: RouteContext, res: ServerResponse, location: string): void {
  const cookies = rc.response.headers.getSetCookie()
  if (cookies.length) res.setHeader('set-cookie', cookies)
  send(res, 303, 'text/plain; charset=utf-8', '', { location })
}

function sendOutgoing(rc: RouteContext, res: ServerResponse, out: Outgoing): void {
  if ('redirect' in out) {
    redirect(rc, res, out.redirect)
    return
  }
  const nonce = randomBytes(16).toString('base64')
  const cookies = rc.response.headers.getSetCookie()
  if (cookies.length) res.setHeader('set-cookie', cookies)
  send(res, 200, 'text/html; charset=utf-8', postForm(out.post, nonce), {
    'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; form-action ${new URL(out.post.url).origin}; frame-ancestors 'none'; base-uri 'none'`,
    'referrer-policy': 'no-referrer',
  })
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY) throw new SamlRefusal('MALFORMED_REQUEST')
    chunks.push(chunk as Buffer)
  }
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
  if (type !== 'application/x-www-form-urlencoded') throw new SamlRefusal('MALFORMED_REQUEST')
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
}

/** A SAML message as received, whichever binding. */
interface Received {
  binding: 'redirect' | 'post'
  kind: 'SAMLRequest' | 'SAMLResponse'
  xml: string
  root: Element
  relayState: string | null
  raw: Map<string, string> | null
}

async function receive(rc: RouteContext, req: IncomingMessage): Promise<Received> {
  if (req.method === 'GET') {
    const raw = rawQueryParams(rc.url.search)
    const kind = raw.has('SAMLRequest') ? 'SAMLRequest' : raw.has('SAMLResponse') ? 'SAMLResponse' : null
    if (!kind) throw new SamlRefusal('MALFORMED_REQUEST')
    // Read from the raw values the signature check uses, never from another parse of the query.
    const xml = inflateParam(decode(raw.get(kind) ?? ''))
    const relay = raw.get('RelayState')
    const relayState = relay === undefined ? null : decode(relay)
    checkRelayState(relayState)
    return { binding: 'redirect', kind, xml, root: parseXml(xml), relayState, raw }
  }
  if (req.method !== 'POST') throw new SamlRefusal('MALFORMED_REQUEST')
  const form = await readForm(req)
  const kind = form.has('SAMLRequest') ? 'SAMLRequest' : form.has('SAMLResponse') ? 'SAMLResponse' : null
  if (!kind) throw new SamlRefusal('MALFORMED_REQUEST')
  const xml = decodePostParam(form.get(kind) ?? '')
  const relayState = form.get('RelayState')
  checkRelayState(relayState)
  return { binding: 'post', kind, xml, root: parseXml(xml), relayState, raw: null }
}

function checkRelayState(relayState: string | null): void {
  if (relayState !== null && Buffer.byteLength(relayState, 'utf8') > MAX_RELAY_STATE_BYTES) throw new SamlRefusal('RELAY_STATE_TOO_LONG')
}

/**
 * The message's SP, and the message as its signature covers it. `required`: refused unsigned. A
 * POSTed message is read back from what the signature covers (never the rest of the document).
 */
async function authenticate(ctx: AuthContext, msg: Received, local: string, required: (sp: ServiceProvider) => boolean) {
  if (msg.root.namespaceURI !== NS.protocol || msg.root.localName !== local) throw new SamlRefusal('MALFORMED_REQUEST')
  const issuer = textOf(child(msg.root, NS.assertion, 'Issuer'))
  if (!issuer) throw new SamlRefusal('UNKNOWN_SP')
  const sp = await serviceProviderByEntityId(ctx, issuer)
  if (!sp) throw new SamlRefusal('UNKNOWN_SP', issuer)
  let root = msg.root
  let signed = false
  if (msg.binding === 'redirect') {
    if (msg.raw?.has('Signature')) {
      if (!verifyRedirectSignature(msg.raw, msg.kind, sp.meta.signingCerts)) throw new SamlRefusal('BAD_SIGNATURE', issuer)
      signed = true
    }
  } else {
    const verified = verifyEnvelopedSignature(msg.xml, msg.root, sp.meta.signingCerts, issuer)
    if (verified) {
      root = verified
      signed = true
      if (textOf(child(root, NS.assertion, 'Issuer')) !== issuer) throw new SamlRefusal('BAD_SIGNATURE', issuer)
    }
  }
  if (!signed && required(sp)) throw new SamlRefusal('UNSIGNED_REQUEST', issuer)
  const id = root.getAttribute('ID')
  if (root.getAttribute('Version') !== '2.0' || !id || id.length > MAX_ID_LENGTH) throw new SamlRefusal('MALFORMED_REQUEST', issuer)
  return { sp, root, signed }
}

function checkFreshness(ctx: AuthContext, root: Element, spEntityId: string): void {
  const issued = Date.parse(root.getAttribute('IssueInstant') ?? '')
  if (!Number.isFinite(issued) || Math.abs(ctx.clock.now() - issued) > SKEW_MS) throw new SamlRefusal('REQUEST_EXPIRED', spEntityId)
}

/** A signed message must name where it was sent (SAML bindings 3.4.5.2, 3.5.5.2): one signed for elsewhere is not taken here. */
function checkDestination(root: Element, expected: string, spEntityId: string, signed: boolean): void {
  const destination = root.getAttribute('Destination')
  if (destination ? destination !== expected : signed) throw new SamlRefusal('DESTINATION_MISMATCH', spEntityId)
}

const lastSweep = new WeakMap<AuthContext['db'], number>()

/** Removes expired requests, at most once a minute per process (by the injected clock). */
async function sweepExpired(ctx: AuthContext, now: number): Promise<void> {
  const last = lastSweep.get(ctx.db)
  if (last !== undefined && now - last < SWEEP_EVERY_MS && now >= last) return
  lastSweep.set(ctx.db, now)
  await deleteExpiredRequests(ctx, new Date(now))
}

const continueUrl = (ctx: AuthContext, id: string): string => `${ctx.baseURL}/saml/continue/${id}`

async function handleSso(rc: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { ctx } = rc
  const msg = await receive(rc, req)
  if (msg.kind !== 'SAMLRequest') throw new SamlRefusal('MALFORMED_REQUEST')
  const { sp, root, signed } = await authenticate(ctx, msg, 'AuthnRequest', (s) => s.meta.authnRequestsSigned)
  checkDestination(root, ssoUrl(ctx), sp.entityId, signed)
  checkFreshness(ctx, root, sp.entityId)
  const binding = root.getAttribute('ProtocolBinding')
  if (binding && binding !== BINDING.post) throw new SamlRefusal('ACS_NOT_IN_METADATA', sp.entityId)
  const indexText = root.getAttribute('AssertionConsumerServiceIndex')
  const acs = chooseAcs(sp.meta, {
    url: root.getAttribute('AssertionConsumerServiceURL'),
    index: indexText ? Number.parseInt(indexText, 10) : null,
  })
  if (!acs) throw new SamlRefusal('ACS_NOT_IN_METADATA', sp.entityId)
  const now = ctx.clock.now()
  await sweepExpired(ctx, now)
  const source = rateLimitIdentity(rc.meta.ipAddress ?? 'unknown')
  if ((await countPendingRequests(ctx, source, new Date(now))) >= MAX_PENDING_PER_SOURCE)
    throw new SamlRefusal('TOO_MANY_PENDING_REQUESTS', sp.entityId)
  const id = generateId()
  const stored = await insertRequest(ctx, {
    id,
    spEntityId: sp.entityId,
    requestId: root.getAttribute('ID'),
    relayState: msg.relayState,
    acsUrl: acs,
    forceAuthn: xsdTrue(root.getAttribute('ForceAuthn')),
    isPassive: xsdTrue(root.getAttribute('IsPassive')),
    createdAt: new Date(now),
    expiresAt: new Date(now + REQUEST_TTL_MS),
    usedAt: null,
    source,
  })
  if (!stored) throw new SamlRefusal('REPLAYED_REQUEST', sp.entityId)
  redirect(rc, res, continueUrl(ctx, id))
}

/**
 * The browser's Gatehouse session (its cookie, or the bearer token of one): a stand-in a feature
 * offers (an API key's synthetic session under `apiKey.enableSessionForAPIKeys`) is no sign-in and
 * answers no SAML request.
 */
async function currentSession(rc: RouteContext): Promise<SessionWithUser | null> {
  const resolved = await resolveRequestSession(rc, { disableRefresh: true })
  if (resolved.status !== 'active') return null
  return resolved.data.session.token === requestSessionToken(rc) ? resolved.data : null
}

function signInFirst(rc: RouteContext, res: ServerResponse, returnTo: string): void {
  redirect(rc, res, hostedPageURL(rc.ctx, 'sign-in', { returnTo }))
}

/**
 * Who may get an assertion for this SP: the admission rule of every face (core/admission.ts: not
 * banned, a verified email while `identity.requireVerifiedEmail` is on — the email is the NameID
 * and an attribute the SP trusts, and a session may predate the setting —, no impersonation, …),
 * then one of its allowed groups when it names any. `enrol`: the person's second-factor enrolment
 * is overdue (two-factor enforcement, issue 49 §10).
 */
async function admit(ctx: AuthContext, sp: ServiceProvider, signedIn: SessionWithUser): Promise<Person | 'enrol'> {
  const refusal = await admitToFace(ctx, signedIn, 'saml')
  if (refusal === 'TWO_FACTOR_ENROLLMENT_REQUIRED') return 'enrol'
  if (refusal === 'BANNED_USER') throw new SamlRefusal('BANNED', sp.entityId)
  if (refusal === 'EMAIL_NOT_VERIFIED') throw new SamlRefusal('EMAIL_NOT_VERIFIED', sp.entityId)
  if (refusal) throw new SamlRefusal('NOT_ADMITTED', sp.entityId)
  const person = await personOf(ctx, signedIn.user)
  if (!inAllowedGroups(sp.allowedGroups, person.groups)) throw new SamlRefusal('NOT_IN_ALLOWED_GROUPS', sp.entityId)
  return person
}

/** IsPassive and the person would need a page (sign-in, enrolment): the SP hears NoPassive (SAML core 3.4.1). */
async function noPassive(rc: RouteContext, res: ServerResponse, request: SamlRequestRow, now: number): Promise<void> {
  const { ctx } = rc
  if (!(await spendRequest(ctx, request.id, new Date(now)))) throw new SamlRefusal('REQUEST_NOT_FOUND', request.spEntityId)
  const value = statusResponse({
    idpEntityId: idpEntityId(ctx),
    acsUrl: request.acsUrl,
    inResponseTo: request.requestId,
    now,
    status: 'Responder',
    subStatus: 'NoPassive',
    key: await signingKey(ctx),
  })
  sendOutgoing(rc, res, { post: { url: request.acsUrl, field: 'SAMLResponse', value, relayState: request.relayState } })
}

async function handleContinue(rc: RouteContext, res: ServerResponse, id: string, env: Env): Promise<void> {
  const { ctx } = rc
  const request = await findRequest(ctx, id)
  const now = ctx.clock.now()
  if (!request || request.usedAt || request.expiresAt.getTime() <= now)
    throw new SamlRefusal('REQUEST_NOT_FOUND', request?.spEntityId ?? null)
  const sp = await serviceProviderByEntityId(ctx, request.spEntityId)
  if (!sp) throw new SamlRefusal('UNKNOWN_SP', request.spEntityId)
  // The ACS was chosen from the metadata when the request came; the metadata may have changed since.
  if (!sp.meta.acs.some((a) => a.location === request.acsUrl)) throw new SamlRefusal('ACS_NOT_IN_METADATA', sp.entityId)
  const signedIn = await currentSession(rc)
  // ForceAuthn (SAML core 3.4.1): the person authenticates now, not through a session they already had.
  const usable = signedIn && !(request.forceAuthn && signedIn.session.createdAt.getTime() < request.createdAt.getTime())
  if (!usable) {
    if (!request.isPassive) return signInFirst(rc, res, continueUrl(ctx, id))
    return noPassive(rc, res, request, now)
  }
  const person = await admit(ctx, sp, signedIn)
  if (person === 'enrol') {
    // An overdue second-factor enrolment: the hosted Two-factor page's enrolment step, then back
    // here to this same request (still pending) for the assertion. IsPassive allows no page: NoPassive.
    // With the hosted pages off there is nowhere to enrol: the refusal stands.
    if (request.isPassive) return noPassive(rc, res, request, now)
    const step = enrolmentStepURL(ctx, continueUrl(ctx, id))
    if (!step) throw new SamlRefusal('NOT_ADMITTED', sp.entityId)
    return redirect(rc, res, step)
  }
  if (!(await spendRequest(ctx, id, new Date(now)))) throw new SamlRefusal('REQUEST_NOT_FOUND', sp.entityId)
  const user = signedIn.user
  const nameId = nameIdOf(ctx, sp, user)
  const sessionIndex = `_${generateId()}`
  const key = await signingKey(ctx)
  const response = loginResponse({
    idpEntityId: idpEntityId(ctx),
    spEntityId: sp.entityId,
    acsUrl: request.acsUrl,
    inResponseTo: request.requestId,
    now,
    authnInstant: signedIn.session.createdAt.getTime(),
    sessionIndex,
    nameIdFormat: sp.nameIdFormat,
    nameId,
    // The faces' one record of the person (groups/person.ts): the same login name and groups as LDAP and forward auth.
    attributes: { email: [person.email], name: [person.name], uid: [person.loginName], groups: person.groups },
    key,
  })
  await insertParticipant(ctx, {
    id: generateId(),
    sessionId: signedIn.session.id,
    userId: user.id,
    spEntityId: sp.entityId,
    nameId,
    nameIdFormat: NAME_ID_FORMATS[sp.nameIdFormat],
    sessionIndex,
    createdAt: new Date(now),
  })
  await recordAudit(ctx, {
    type: 'saml.assertion-issued',
    actorUserId: user.id,
    target: sp.id,
    detail: { entityId: sp.entityId, acs: request.acsUrl, nameIdFormat: sp.nameIdFormat, idpInitiated: request.requestId === null },
    meta: rc.meta,
  })
  env.onAssertion?.('issued')
  sendOutgoing(rc, res, { post: { url: request.acsUrl, field: 'SAMLResponse', value: response.base64, relayState: request.relayState } })
}

async function handleIdpInitiated(rc: RouteContext, res: ServerResponse): Promise<void> {
  const { ctx } = rc
  const ref = rc.url.searchParams.get('sp') ?? ''
  const sp = ref ? await serviceProviderByEntityId(ctx, ref) : null
  if (!sp) throw new SamlRefusal('UNKNOWN_SP', ref || null)
  const signedIn = await currentSession(rc)
  if (!signedIn) return signInFirst(rc, res, `${ctx.baseURL}/saml/idp-initiated?sp=${encodeURIComponent(sp.entityId)}`)
  const acs = chooseAcs(sp.meta, {})
  if (!acs) throw new SamlRefusal('ACS_NOT_IN_METADATA', sp.entityId)
  const now = ctx.clock.now()
  const id = generateId()
  await insertRequest(ctx, {
    id,
    spEntityId: sp.entityId,
    requestId: null,
    relayState: null,
    acsUrl: acs,
    forceAuthn: false,
    isPassive: false,
    createdAt: new Date(now),
    expiresAt: new Date(now + REQUEST_TTL_MS),
    usedAt: null,
    source: null,
  })
  redirect(rc, res, continueUrl(ctx, id))
}

function sloTarget(meta: SpMetadata, response: boolean): { binding: 'redirect' | 'post'; url: string } | null {
  const slo = meta.slo.find((s) => s.binding === BINDING.redirect) ?? meta.slo[0]
  if (!slo) return null
  return { binding: slo.binding === BINDING.redirect ? 'redirect' : 'post', url: (response && slo.responseLocation) || slo.location }
}

/**
 * Ends the Gatehouse sessions a LogoutRequest names (by SessionIndex, else every session this SP
 * holds for the NameID); returns their ids. This SP's records go; the other SPs' stay for the chain.
 */
async function endSessions(rc: RouteContext, sp: ServiceProvider, root: Element): Promise<string[]> {
  const { ctx } = rc
  const nameId = textOf(child(root, NS.assertion, 'NameID'))
  const indexes = children(root, NS.protocol, 'SessionIndex').map(textOf).filter(Boolean)
  // No SessionIndex: every session of the principal at this SP (SAML core §3.7.3.2).
  const found = indexes.length
    ? (await Promise.all(indexes.map((i) => participantsBySessionIndex(ctx, i)))).flat()
    : nameId
      ? await participantsByNameId(ctx, sp.entityId, nameId)
      : []
  const mine = found.filter((p) => p.spEntityId === sp.entityId && p.nameId === nameId)
  const current = await currentSession(rc)
  for (const sessionId of new Set(mine.map((p) => p.sessionId))) {
    const userId = mine.find((p) => p.sessionId === sessionId)?.userId as string
    const row = await findUserSessionById(ctx, userId, sessionId)
    if (row) {
      await deleteSessionByToken(ctx, row.token)
      await recordAudit(ctx, {
        type: 'user.sign-out',
        actorUserId: userId,
        target: sessionId,
        detail: { via: 'saml-slo', sp: sp.entityId },
        meta: rc.meta,
      })
    }
    if (current?.session.id === sessionId) clearSessionCookies(rc)
    await deleteParticipants(
      ctx,
      (await participantsOfSession(ctx, sessionId)).filter((p) => p.spEntityId === sp.entityId).map((p) => p.id),
    )
  }
  return [...new Set(mine.map((p) => p.sessionId))]
}

async function handleSlo(rc: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { ctx } = rc
  const msg = await receive(rc, req)
  if (msg.kind === 'SAMLResponse') {
    // The answer to one of our LogoutRequests (GET /saml/logout's chain): checked, then the chain goes on.
    const { sp, root } = await authenticate(ctx, msg, 'LogoutResponse', () => true)
    checkDestination(root, sloUrl(ctx), sp.entityId, true)
    return await continueLogout(rc, res, safeReturnTo(ctx, msg.relayState))
  }
  // A LogoutRequest must be signed: an unsigned one would let anyone end someone's session.
  const { sp, root } = await authenticate(ctx, msg, 'LogoutRequest', () => true)
  checkDestination(root, sloUrl(ctx), sp.entityId, true)
  checkFreshness(ctx, root, sp.entityId)
  const target = sloTarget(sp.meta, true)
  if (!target) throw new SamlRefusal('NO_SLO', sp.entityId)
  // Its ID is kept, spent, beside the AuthnRequests' (an issuer's IDs are unique across its
  // messages): a replay (a signed Redirect URL ends up in logs and histories) is refused.
  const now = ctx.clock.now()
  const markerId = generateId()
  const fresh = await insertRequest(ctx, {
    id: markerId,
    spEntityId: sp.entityId,
    requestId: root.getAttribute('ID'),
    relayState: msg.relayState,
    acsUrl: '',
    forceAuthn: false,
    isPassive: false,
    createdAt: new Date(now),
    expiresAt: new Date(now + REQUEST_TTL_MS),
    usedAt: new Date(now),
    source: null,
  })
  if (!fresh) throw new SamlRefusal('REPLAYED_REQUEST', sp.entityId)
  const ended = await endSessions(rc, sp, root)
  // The person's other SPs hear of it first, one after another through this browser (the same chain
  // as a sign-out at Gatehouse); the last step answers this SP (answerLogoutRequest).
  const chain = { sessionIds: ended, markerId }
  setSignedCookie(rc, LOGOUT_COOKIE, chainValue(chain), REQUEST_TTL_MS / 1000)
  await continueLogout(rc, res, hostedPageURL(ctx, 'sign-out', { done: '1' }), chain)
}

/** The LogoutResponse to the SP whose LogoutRequest began the chain (its ID and RelayState kept in its replay marker). */
async function answerLogoutRequest(rc: RouteContext, res: ServerResponse, markerId: string): Promise<boolean> {
  const { ctx } = rc
  const marker = await findRequest(ctx, markerId)
  const sp = marker?.requestId ? await serviceProviderByEntityId(ctx, marker.spEntityId) : null
  const target = sp ? sloTarget(sp.meta, true) : null
  if (!marker?.requestId || !target) return false
  const out = logoutResponse(
    { idpEntityId: idpEntityId(ctx), destination: target.url, inResponseTo: marker.requestId, now: ctx.clock.now() },
    target,
    marker.relayState,
    await signingKey(ctx),
  )
  sendOutgoing(rc, res, out)
  return true
}

/**
 * The signed cookie that carries a front-channel logout from one SP to the next, once the sessions
 * are gone: the ended sessions' ids, and for a chain an SP's LogoutRequest began, its replay marker
 * (`<id>,<id>~<marker>`).
 */
const LOGOUT_COOKIE = 'saml_logout'

interface Chain {
  sessionIds: string[]
  markerId: string | null
}
const chainValue = (c: Chain): string => `${c.sessionIds.join(',')}${c.markerId ? `~${c.markerId}` : ''}`
function readChain(rc: RouteContext): Chain | null {
  const value = readSignedCookie(rc, LOGOUT_COOKIE)
  if (!value) return null
  const [ids = '', markerId] = value.split('~')
  return { sessionIds: ids.split(',').filter(Boolean), markerId: markerId || null }
}

const safeReturnTo = (ctx: AuthContext, asked: string | null): string =>
  asked?.startsWith(`${ctx.baseURL}/`) ? asked : hostedPageURL(ctx, 'sign-out', { done: '1' })

/**
 * The next step of a front-channel logout: a LogoutRequest to the next SP the ended sessions signed
 * in to; when none is left, the answer to the SP that began it, else the browser goes to `returnTo`.
 */
async function continueLogout(rc: RouteContext, res: ServerResponse, returnTo: string, started?: Chain): Promise<void> {
  const { ctx } = rc
  const chain = started ?? readChain(rc)
  if (!chain) return redirect(rc, res, returnTo)
  for (const sessionId of chain.sessionIds)
    for (const p of await participantsOfSession(ctx, sessionId)) {
      const sp = await serviceProviderByEntityId(ctx, p.spEntityId)
      const target = sp ? sloTarget(sp.meta, false) : null
      // The same person's other sessions at this SP (same NameID). mod_auth_mellon finds a session by
      // NameID alone, the first it holds, and lasso then refuses a SessionIndex of another session
      // with a 500 that stops the chain (latchset/mod_auth_mellon#140). So every one of them is ended
      // by a LogoutRequest without SessionIndex ("every session of the NameID", SAML core §3.7.3.2),
      // one request per session because mellon ends one at a time; this browser's own comes last,
      // also without SessionIndex. The other browsers keep their Gatehouse sessions: their next visit
      // to the SP signs them in again without a prompt.
      const sibling = (await participantsByNameId(ctx, p.spEntityId, p.nameId)).find((o) => o.id !== p.id)
      if (sibling && sp && target) {
        await deleteParticipants(ctx, [sibling.id])
        if (p.sessionIndex) await forgetSessionIndex(ctx, p.id)
      } else await deleteParticipants(ctx, [p.id])
      if (!sp || !target) continue
      const { outgoing } = logoutRequest(
        {
          idpEntityId: idpEntityId(ctx),
          destination: target.url,
          now: ctx.clock.now(),
          nameId: p.nameId,
          nameIdFormat: p.nameIdFormat,
          spEntityId: sp.entityId,
          sessionIndex: sibling ? undefined : p.sessionIndex || undefined,
        },
        target,
        returnTo,
        await signingKey(ctx),
      )
      return sendOutgoing(rc, res, outgoing)
    }
  expirePluginCookie(rc, LOGOUT_COOKIE)
  if (chain.markerId && (await answerLogoutRequest(rc, res, chain.markerId))) return
  redirect(rc, res, returnTo)
}

/**
 * `GET /saml/logout[?returnTo=]`: Gatehouse's own sign-out, front-channel. The session ends at the
 * first step (an SP that never answers must not leave it alive); then each SP the session signed in
 * to gets a LogoutRequest in turn (its answer comes back to /saml/slo, which sends the browser here
 * again, the signed `saml_logout` cookie naming the ended session); when none is left the browser
 * goes to `returnTo` (this origin only) or the hosted sign-out page.
 */
async function handleLogout(rc: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { ctx } = rc
  const returnTo = safeReturnTo(ctx, rc.url.searchParams.get('returnTo'))
  const signedIn = await currentSession(rc)
  // Another site sending the browser here (logout CSRF): the hosted page asks first. The chain's
  // later steps come from the SPs (cross-site) but have no session left to end.
  const site = req.headers['sec-fetch-site']
  if (signedIn && (site === 'cross-site' || site === 'same-site')) return redirect(rc, res, hostedPageURL(ctx, 'sign-out'))
  if (signedIn) {
    const sessionId = signedIn.session.id
    await deleteSessionByToken(ctx, signedIn.session.token)
    await recordAudit(ctx, {
      type: 'user.sign-out',
      actorUserId: signedIn.user.id,
      target: sessionId,
      detail: { via: 'saml-logout' },
      meta: rc.meta,
    })
    clearSessionCookies(rc)
    const chain = { sessionIds: [sessionId], markerId: null }
    setSignedCookie(rc, LOGOUT_COOKIE, chainValue(chain), REQUEST_TTL_MS / 1000)
    return await continueLogout(rc, res, returnTo, chain)
  }
  await continueLogout(rc, res, returnTo)
}

async function handleMetadata(ctx: AuthContext, res: ServerResponse): Promise<void> {
  send(res, 200, 'application/samlmetadata+xml; charset=utf-8', idpMetadataXml(ctx.baseURL, await publishedCertificates(ctx)), {
    'cache-control': 'public, max-age=300',
  })
}

async function refuse(rc: RouteContext, res: ServerResponse, refusal: SamlRefusal, env: Env): Promise<void> {
  const { ctx } = rc
  env.logger.warn(`SAML request refused: ${refusal.reason}${refusal.spEntityId ? ` (SP ${refusal.spEntityId})` : ''} [${rc.path}]`)
  await recordAudit(ctx, {
    type: 'saml.refused',
    outcome: 'failure',
    target: refusal.spEntityId,
    detail: { reason: refusal.reason, path: rc.path },
    meta: rc.meta,
  })
  env.onAssertion?.('refused')
  const target = new URL(hostedPageURL(ctx, 'error'))
  target.searchParams.set('error', `saml_${refusal.reason.toLowerCase()}`)
  target.searchParams.set('error_description', SAML_ERRORS[refusal.reason])
  redirect(rc, res, target.href)
}

/** Every SAML path; a refusal (or anything unexpected) ends on the hosted error page, never a 5xx. */
export async function handleSaml(rc: RouteContext, req: IncomingMessage, res: ServerResponse, env: Env): Promise<void> {
  const { ctx, path } = rc
  try {
    if (path === '/saml/metadata' && req.method === 'GET') return await handleMetadata(ctx, res)
    if (path === '/saml/sso') return await handleSso(rc, req, res)
    if (path === '/saml/slo') return await handleSlo(rc, req, res)
    if (path.startsWith('/saml/continue/') && req.method === 'GET')
      return await handleContinue(rc, res, path.slice('/saml/continue/'.length), env)
    if (path === '/saml/idp-initiated' && req.method === 'GET') return await handleIdpInitiated(rc, res)
    if (path === '/saml/logout' && req.method === 'GET') return await handleLogout(rc, req, res)
    send(res, 404, 'application/json', JSON.stringify({ code: 'NOT_FOUND', message: 'Not Found' }))
  } catch (error) {
    if (error instanceof SamlRefusal) return await refuse(rc, res, error, env)
    if (error instanceof APIError) return await refuse(rc, res, new SamlRefusal('MALFORMED_REQUEST'), env)
    env.logger.error(`SAML request failed [${path}]:`, error)
    const target = new URL(hostedPageURL(ctx, 'error'))
    target.searchParams.set('error', 'server_error')
    redirect(rc, res, target.href)
  }
}
