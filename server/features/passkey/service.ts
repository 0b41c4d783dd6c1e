import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { APIError } from '../../core/errors.js'
import { panelPage } from '../../core/panel-relay.js'
import type { SessionWithUser, UserRow } from '../../core/sessions.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import { findUserById } from '../../core/users.js'
import { generateId, generateLowerToken } from '../../crypto/random.js'
import { consumeVerification, createVerification } from '../../core/verification.js'
import { passkeyError } from './errors.js'
import type { PasskeyRow } from './schema.js'
import {
  deletePasskey,
  findPasskey,
  findPasskeyByCredential,
  insertPasskey,
  listPasskeys,
  recordPasskeyUse,
  renamePasskey,
} from './store.js'

/**
 * @simplewebauthn/server and its X.509/ASN.1 stack are about 0.8 MB of the server bundle: loaded at
 * the first passkey ceremony, not at every start (most servers never enable passkeys).
 */
let webauthn: Promise<typeof import('@simplewebauthn/server')> | null = null
const loadWebAuthn = () => {
  webauthn ??= import('@simplewebauthn/server')
  return webauthn
}

/** @better-auth/passkey's ceremonies on @simplewebauthn/server, with the relying party and origins from config. */

export const CHALLENGE_MAX_AGE = 300

/** The API's relying-party id: `passkey.rpID`, else the host name of the base URL (a LAN name works). */
export function apiRpId(ctx: AuthContext): string {
  return ctx.config().passkey.rpID ?? new URL(ctx.baseURL).hostname
}

/**
 * Whether a page on `hostname` may use the relying-party id `rpId` (WebAuthn: the host is the id
 * or one of its subdomains; an IP address only itself, and browsers refuse IP addresses anyway).
 */
export const rpIdUsableFrom = (rpId: string, hostname: string): boolean => hostname === rpId || hostname.endsWith(`.${rpId}`)

/**
 * The relying-party id of a ceremony: the API's, except on the browser panel's page
 * (http://localhost:PORT, relayed in-process: core/panel-relay.ts) when the API's id cannot be
 * used there; then the panel's host name, so an administrator's passkey for the panel is bound to
 * the panel. With `passkey.rpID: "localhost"` the same passkeys work on both.
 */
export function rpIdOf(ctx: AuthContext): string {
  const rpId = apiRpId(ctx)
  const page = panelPage()
  return page && !rpIdUsableFrom(rpId, page.hostname) ? page.hostname : rpId
}

/**
 * Origins a ceremony may come from: on the panel's page, that page's origin only; else
 * `passkey.origin`, else the base URL's origin and the exact trusted origins.
 */
export function allowedOrigins(ctx: AuthContext): string[] {
  const page = panelPage()
  if (page) return [page.origin]
  const configured = ctx.config().passkey.origin
  if (configured) return Array.isArray(configured) ? configured : [configured]
  const exact = ctx
    .config()
    .trustedOrigins.filter((o) => /^https?:\/\/[^*]+$/.test(o))
    .map((o) => o.replace(/\/+$/, ''))
  return [new URL(ctx.baseURL).origin, ...exact]
}

interface Pending {
  type: 'registration' | 'authentication'
  expectedChallenge: string
  userData: { id: string; name?: string; displayName?: string }
}

/** Stores a ceremony's challenge for 5 minutes; returns the handle the signed cookie carries. */
async function storeChallenge(ctx: AuthContext, pending: Pending): Promise<string> {
  const token = generateId(32)
  await createVerification(ctx, token, JSON.stringify(pending), CHALLENGE_MAX_AGE)
  return token
}

async function takeChallenge(ctx: AuthContext, token: string | null, type: Pending['type']): Promise<Pending> {
  if (!token) throw passkeyError(400, 'CHALLENGE_NOT_FOUND')
  const row = await consumeVerification(ctx, token)
  if (!row) throw passkeyError(400, 'CHALLENGE_NOT_FOUND')
  const pending = JSON.parse(row.value) as Pending
  if (pending.type !== type) throw passkeyError(400, 'CHALLENGE_NOT_FOUND')
  return pending
}

export async function registrationOptions(
  ctx: AuthContext,
  current: SessionWithUser,
  query: { name?: string; authenticatorAttachment?: 'platform' | 'cross-platform' },
) {
  const u = current.user
  const name = u.email || u.id
  const options = await (await loadWebAuthn()).generateRegistrationOptions({
    rpName: ctx.config().passkey.rpName ?? ctx.config().mail.appName,
    rpID: rpIdOf(ctx),
    userID: new TextEncoder().encode(generateLowerToken(32)),
    userName: query.name || name,
    userDisplayName: name,
    attestationType: 'none',
    excludeCredentials: (await listPasskeys(ctx, u.id)).map((p) => ({
      id: p.credentialID,
      transports: p.transports ? p.transports.split(',') : undefined,
    })) as never,
    authenticatorSelection: {
      residentKey: 'preferred',
      userVerification: 'preferred',
      ...(query.authenticatorAttachment ? { authenticatorAttachment: query.authenticatorAttachment } : {}),
    },
  })
  const token = await storeChallenge(ctx, {
    type: 'registration',
    expectedChallenge: options.challenge,
    userData: { id: u.id, name, displayName: name },
  })
  return { options, token }
}

export async function verifyRegistration(
  ctx: AuthContext,
  current: SessionWithUser,
  input: { response: RegistrationResponseJSON; name?: string; origin: string | null; token: string | null },
  meta: RequestMeta,
): Promise<PasskeyRow> {
  if (!input.origin) throw passkeyError(400, 'FAILED_TO_VERIFY_REGISTRATION')
  const pending = await takeChallenge(ctx, input.token, 'registration')
  if (pending.userData.id !== current.user.id) throw passkeyError(401, 'YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY')
  let info: Awaited<ReturnType<typeof import('@simplewebauthn/server').verifyRegistrationResponse>>['registrationInfo']
  try {
    const result = await (await loadWebAuthn()).verifyRegistrationResponse({
      response: input.response,
      expectedChallenge: pending.expectedChallenge,
      expectedOrigin: allowedOrigins(ctx),
      expectedRPID: rpIdOf(ctx),
      requireUserVerification: false,
    })
    if (!result.verified) throw new Error('not verified')
    info = result.registrationInfo
  } catch (e) {
    await recordAudit(ctx, {
      type: 'passkey.registered',
      outcome: 'failure',
      actorUserId: current.user.id,
      detail: { reason: e instanceof Error ? e.message : 'FAILED' },
      meta,
    })
    // better-auth answers a refused registration with 500 FAILED_TO_VERIFY_REGISTRATION.
    throw passkeyError(500, 'FAILED_TO_VERIFY_REGISTRATION')
  }
  const { credential, credentialDeviceType, credentialBackedUp, aaguid } = info
  if (await findPasskeyByCredential(ctx, credential.id)) throw passkeyError(400, 'FAILED_TO_VERIFY_REGISTRATION')
  const row = await insertPasskey(ctx, {
    name: input.name ?? null,
    userId: current.user.id,
    credentialID: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64'),
    counter: credential.counter,
    deviceType: credentialDeviceType,
    backedUp: credentialBackedUp,
    transports: input.response.response.transports?.join(',') ?? '',
    createdAt: new Date(ctx.clock.now()),
    aaguid,
  })
  await recordAudit(ctx, {
    type: 'passkey.registered',
    actorUserId: current.user.id,
    target: row.id,
    detail: { name: row.name, deviceType: row.deviceType, backedUp: row.backedUp },
    meta,
  })
  return row
}

export async function authenticationOptions(ctx: AuthContext, current: SessionWithUser | null) {
  const mine = current ? await listPasskeys(ctx, current.user.id) : []
  const options = await (await loadWebAuthn()).generateAuthenticationOptions({
    rpID: rpIdOf(ctx),
    userVerification: 'preferred',
    ...(mine.length
      ? {
          allowCredentials: mine.map((p) => ({
            id: p.credentialID,
            transports: p.transports ? p.transports.split(',') : undefined,
          })) as never,
        }
      : {}),
  })
  const token = await storeChallenge(ctx, {
    type: 'authentication',
    expectedChallenge: options.challenge,
    userData: { id: current?.user.id ?? '' },
  })
  return { options, token }
}

/**
 * Sign-in with a passkey (discoverable: no email typed), its first step: the counter must grow (a
 * clone presenting an old one is refused); the sign-in pipeline does the rest.
 */
export async function verifyAuthentication(
  ctx: AuthContext,
  input: { response: AuthenticationResponseJSON; origin: string | null; token: string | null },
  meta: RequestMeta,
): Promise<SignInAttempt> {
  if (!input.origin) throw new APIError(400, 'BAD_REQUEST', 'origin missing')
  const pending = await takeChallenge(ctx, input.token, 'authentication')
  const found = typeof input.response?.id === 'string' ? await findPasskeyByCredential(ctx, input.response.id) : undefined
  if (!found) {
    await recordAudit(ctx, { type: 'passkey.sign-in', outcome: 'failure', detail: { reason: 'PASSKEY_NOT_FOUND' }, meta })
    throw passkeyError(401, 'PASSKEY_NOT_FOUND')
  }
  let next: { counter: number; backedUp: boolean; deviceType: string }
  try {
    const result = await (await loadWebAuthn()).verifyAuthenticationResponse({
      response: input.response,
      expectedChallenge: pending.expectedChallenge,
      expectedOrigin: allowedOrigins(ctx),
      expectedRPID: rpIdOf(ctx),
      credential: {
        id: found.credentialID,
        publicKey: new Uint8Array(Buffer.from(found.publicKey, 'base64')),
        counter: found.counter,
        transports: found.transports ? (found.transports.split(',') as never) : undefined,
      },
      requireUserVerification: false,
    })
    if (!result.verified) throw new Error('not verified')
    const info = result.authenticationInfo
    next = { counter: info.newCounter, backedUp: info.credentialBackedUp, deviceType: info.credentialDeviceType }
  } catch (e) {
    const reason = e instanceof Error ? e.message : 'FAILED'
    await recordAudit(ctx, {
      type: 'passkey.sign-in',
      outcome: 'failure',
      targetUserId: found.userId,
      target: found.id,
      detail: { reason },
      meta,
    })
    throw passkeyError(400, 'AUTHENTICATION_FAILED')
  }
  if (!(await recordPasskeyUse(ctx, found.id, found.counter, next))) {
    await recordAudit(ctx, {
      type: 'passkey.sign-in',
      outcome: 'failure',
      targetUserId: found.userId,
      target: found.id,
      detail: { reason: 'CONCURRENT_USE' },
      meta,
    })
    throw passkeyError(400, 'AUTHENTICATION_FAILED')
  }
  const owner = (await findUserById(ctx, found.userId)) as UserRow | undefined
  if (!owner) throw passkeyError(500, 'USER_NOT_FOUND')
  return {
    user: owner,
    method: 'passkey',
    // A passkey is a second factor by itself (two-factor reads passkeys as one).
    secondFactor: 'satisfied',
    audit: [{ type: 'passkey.sign-in', actorUserId: owner.id, target: found.id, detail: { counter: next.counter } }],
  }
}

/** A user's own passkey, or the refusal better-auth gives (404 unknown, 401 someone else's). */
async function ownPasskey(ctx: AuthContext, userId: string, id: string, forbidden: APIError): Promise<PasskeyRow> {
  const row = await findPasskey(ctx, id)
  if (!row) throw passkeyError(404, 'PASSKEY_NOT_FOUND')
  if (row.userId !== userId) throw forbidden
  return row
}

export async function renameOwnPasskey(
  ctx: AuthContext,
  current: SessionWithUser,
  id: string,
  name: string,
  meta: RequestMeta,
): Promise<PasskeyRow> {
  await ownPasskey(ctx, current.user.id, id, passkeyError(401, 'YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY'))
  const updated = await renamePasskey(ctx, id, name)
  if (!updated) throw passkeyError(500, 'FAILED_TO_UPDATE_PASSKEY')
  await recordAudit(ctx, { type: 'passkey.renamed', actorUserId: current.user.id, target: id, detail: { name }, meta })
  return updated
}

export async function deleteOwnPasskey(ctx: AuthContext, current: SessionWithUser, id: string, meta: RequestMeta): Promise<void> {
  await ownPasskey(ctx, current.user.id, id, new APIError(401, 'UNAUTHORIZED', 'Unauthorized'))
  await deletePasskey(ctx, id)
  await recordAudit(ctx, { type: 'passkey.deleted', actorUserId: current.user.id, target: id, meta })
}

export { listPasskeys }
