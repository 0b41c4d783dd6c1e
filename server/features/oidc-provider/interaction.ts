import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type Provider from 'oidc-provider'
import type { GrantInstance, InteractionDetails } from 'oidc-provider'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext } from '../../core/context.js'
import { requestOriginOf } from '../../config/trusted-origins.js'
import { admittedUser, mayUseClient } from './accounts.js'
import { gatehouseRequest } from './adapter.js'
import { rememberConsent } from './consent.js'
import { OIDC_ERRORS } from './errors.js'
import { INTERACTION_PREFIX, requestState } from './provider.js'
import { findClient } from './store.js'
import { hostedPageURL } from '../../http/hosted-page-url.js'

/**
 * The interaction routes oidc-provider sends the browser to (B/oidc/interaction/<uid>): the login
 * step is finished from the Gatehouse session (SSO) or sent to the hosted sign-in page; consent
 * is asked on the hosted consent page, which reads and answers the JSON routes below.
 */

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.statusCode = status
  res.setHeader('content-type', 'application/json')
  res.setHeader('cache-control', 'no-store')
  res.setHeader('content-length', Buffer.byteLength(text))
  res.end(text)
}

function redirect(res: ServerResponse, location: string): void {
  res.statusCode = 303
  res.setHeader('location', location)
  res.setHeader('cache-control', 'no-store')
  res.setHeader('content-length', '0')
  res.end()
}

function errorPage(ctx: AuthContext, error: string, description: string): string {
  const target = new URL(hostedPageURL(ctx, 'error'))
  target.searchParams.set('error', error)
  target.searchParams.set('error_description', description)
  return target.href
}

const scopesOf = (details: InteractionDetails): string[] =>
  String(details.params.scope ?? '')
    .split(' ')
    .filter(Boolean)

async function audit(ctx: AuthContext, req: IncomingMessage, event: Parameters<typeof recordAudit>[1]): Promise<void> {
  await recordAudit(ctx, { meta: requestState.get(req)?.meta ?? null, ...event })
}

/** Grants what the authorization request asked for and is not granted yet; returns the grant. */
async function grantRequested(
  provider: Provider,
  details: InteractionDetails,
  accountId: string,
  clientId: string,
): Promise<GrantInstance> {
  const grant = (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ?? new provider.Grant({ accountId, clientId })
  const missing = details.prompt.details as {
    missingOIDCScope?: string[]
    missingOIDCClaims?: string[]
    missingResourceScopes?: Record<string, string[]>
  }
  if (missing.missingOIDCScope?.length) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
  if (missing.missingOIDCClaims?.length) grant.addOIDCClaims(missing.missingOIDCClaims)
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(resource, scopes.join(' '))
  await grant.save()
  return grant
}

/**
 * prompt=login, or a max_age older than the sign-in (OIDC Core 3.1.2.1): the person signs in again
 * on the hosted page; the Gatehouse session they came with does not count. The sign-in page's
 * returnTo carries a digest of that session, sealed with the server secret for this interaction:
 * back with the same session (or a mark not ours), the sign-in page is shown again.
 */
const sessionDigest = (sessionId: string | null): string =>
  createHash('sha256')
    .update(sessionId ?? '')
    .digest('base64url')
    .slice(0, 22)
const reauthSeal = (ctx: AuthContext, uid: string, digest: string): Buffer =>
  createHmac('sha256', ctx.secret).update(`oidc-reauth\0${uid}\0${digest}`).digest()

function reauthMark(ctx: AuthContext, uid: string, sessionId: string | null): string {
  const digest = sessionDigest(sessionId)
  return `${digest}.${reauthSeal(ctx, uid, digest).toString('base64url')}`
}

function signedInAgain(ctx: AuthContext, uid: string, mark: string | null, sessionId: string | null): boolean {
  const [digest, seal] = (mark ?? '').split('.')
  if (!sessionId || !digest || !seal) return false
  const given = Buffer.from(seal, 'base64url')
  const expected = reauthSeal(ctx, uid, digest)
  return given.length === expected.length && timingSafeEqual(given, expected) && digest !== sessionDigest(sessionId)
}

/** Same-origin check for the consent POSTs (the hosted page calls them with fetch). */
function sameOrigin(ctx: AuthContext, req: IncomingMessage): boolean {
  return requestOriginOf(req.headers) === new URL(ctx.baseURL).origin
}

export async function handleInteraction(
  ctx: AuthContext,
  provider: Provider,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const rest = path.slice(INTERACTION_PREFIX.length).split('/')
  const uid = rest[0] ?? ''
  const action = rest[1] ?? ''
  const wantsJson = action === 'details' || (req.method === 'GET' && String(req.headers.accept ?? '').includes('application/json'))
  const allowed =
    (req.method === 'GET' && (action === '' || action === 'details')) ||
    (req.method === 'POST' && (action === 'consent' || action === 'abort'))
  if (!allowed || rest.length > 2) return sendJson(res, 404, { code: 'NOT_FOUND', message: 'Not Found' })

  let details: InteractionDetails
  try {
    details = await provider.interactionDetails(req, res)
    if (details.uid !== uid) throw new Error('interaction mismatch')
  } catch {
    if (wantsJson || req.method === 'POST')
      return sendJson(res, 404, { code: 'INTERACTION_NOT_FOUND', message: OIDC_ERRORS.INTERACTION_NOT_FOUND })
    return redirect(res, errorPage(ctx, 'invalid_request', OIDC_ERRORS.INTERACTION_NOT_FOUND))
  }
  const clientId = String(details.params.client_id ?? '')
  const client = await findClient(ctx, clientId)
  const userId = requestState.get(req)?.userId ?? null

  if (wantsJson) {
    return sendJson(res, 200, {
      uid: details.uid,
      prompt: details.prompt.name === 'login' ? 'login' : 'consent',
      client: { clientId, name: client?.name ?? clientId, logo: client?.logo ?? null },
      scopes: scopesOf(details),
    })
  }

  const here = `${ctx.baseURL}${INTERACTION_PREFIX}${uid}`
  const signIn = hostedPageURL(ctx, 'sign-in', { returnTo: here })

  if (req.method === 'POST') {
    if (!sameOrigin(ctx, req)) return sendJson(res, 403, { code: 'INVALID_ORIGIN', message: 'Invalid origin' })
    const accountId = details.session?.accountId
    if (!userId || !accountId || accountId !== userId) return sendJson(res, 401, { code: 'UNAUTHORIZED', message: 'Unauthorized' })
    if (action === 'abort') {
      const redirectTo = await provider.interactionResult(req, res, {
        error: 'access_denied',
        error_description: 'End-User aborted interaction',
      })
      await audit(ctx, req, {
        type: 'oidc.consent-denied',
        outcome: 'failure',
        actorUserId: userId,
        target: clientId,
        detail: { scopes: scopesOf(details) },
      })
      return sendJson(res, 200, { redirectTo })
    }
    const grant = await grantRequested(provider, details, accountId, clientId)
    const grantId = grant.jti
    // Remembered for this user and client until revoked (asked again only for more).
    await rememberConsent(ctx, {
      userId: accountId,
      clientId,
      scopes: grant.getOIDCScope().split(' ').filter(Boolean),
      claims: grant.getOIDCClaims(),
      grantId,
    })
    const redirectTo = await provider.interactionResult(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true })
    await audit(ctx, req, { type: 'oidc.consent-granted', actorUserId: userId, target: clientId, detail: { scopes: scopesOf(details) } })
    return sendJson(res, 200, { redirectTo })
  }

  if (details.prompt.name === 'login') {
    if (!userId) return redirect(res, signIn)
    // The Gatehouse sign-in is the authentication (OIDC Core 2 auth_time): max_age counts from it
    // as well as from oidc-provider's session once there is one (its max_age reason without one
    // would ask a person signed in a moment ago to sign in again),
    // and it is the login's time, so a later max_age is not measured from this SSO step.
    const signedInAt = requestState.get(req)?.signedInAt
    const age = typeof signedInAt === 'number' ? Math.max(0, ctx.clock.now() - signedInAt) : 0
    const maxAge = details.params.max_age === undefined ? undefined : Number(details.params.max_age)
    const tooOld =
      maxAge !== undefined &&
      (!Number.isFinite(maxAge) || age > maxAge * 1000 || (details.prompt.reasons.includes('max_age') && !!details.session?.accountId))
    if (details.prompt.reasons.includes('login_prompt') || tooOld) {
      const sessionId = gatehouseRequest.getStore()?.sessionId ?? null
      const mark = new URL(req.url ?? '', ctx.baseURL).searchParams.get('reauth')
      if (!signedInAgain(ctx, uid, mark, sessionId)) {
        const back = `${here}?reauth=${encodeURIComponent(reauthMark(ctx, uid, sessionId))}`
        return redirect(res, hostedPageURL(ctx, 'sign-in', { returnTo: back }))
      }
    }
    // The admission rule of every face (core/admission.ts); an unverified person is asked to verify first,
    // a person whose second-factor enrolment is overdue to enrol.
    const found = await admittedUser(ctx, userId, requestState.get(req)?.session)
    if (found?.refusal === 'EMAIL_NOT_VERIFIED') return redirect(res, hostedPageURL(ctx, 'verify-email', { returnTo: here }))
    // An overdue second-factor enrolment (twoFactor.enforcement) is asked for on the hosted Two-factor page, then back here.
    if (found?.refusal === 'TWO_FACTOR_ENROLLMENT_REQUIRED')
      return redirect(res, hostedPageURL(ctx, 'account/two-factor', { enrol: '1', returnTo: here }))
    const user = found && !found.refusal ? found.user : undefined
    if (!user || !client || !(await mayUseClient(ctx, user.id, client))) {
      const description = !user ? 'The account cannot sign in' : 'The account is not allowed to use this application'
      const returnTo = await provider.interactionResult(req, res, { error: 'access_denied', error_description: description })
      await audit(ctx, req, {
        type: 'oidc.access-denied',
        outcome: 'failure',
        actorUserId: userId,
        target: clientId,
        detail: { reason: description },
      })
      return redirect(res, returnTo)
    }
    const ts = Math.floor((Date.now() - age) / 1000)
    const returnTo = await provider.interactionResult(req, res, { login: { accountId: user.id, remember: true, ts } })
    return redirect(res, returnTo)
  }

  // Consent: the signed-in user must be the one the request is for.
  if (!userId || userId !== details.session?.accountId) return redirect(res, signIn)
  if (client?.skipConsent) {
    const grant = await grantRequested(provider, details, userId, clientId)
    return redirect(res, await provider.interactionResult(req, res, { consent: { grantId: grant.jti } }))
  }
  return redirect(res, hostedPageURL(ctx, 'consent', { interaction: uid }))
}
