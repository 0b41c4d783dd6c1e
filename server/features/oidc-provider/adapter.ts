import type { Adapter, AdapterPayload } from 'oidc-provider'
import { AsyncLocalStorage } from 'node:async_hooks'
import type { AuthContext } from '../../core/context.js'
import { idleOff } from '../../idle-scope.js'
import type { OidcModelRow } from './schema.js'
import type { WriteBatch } from './batch.js'
import { clientMetadata, registeredClientRow } from './clients.js'
import { registrationRequest } from './registration.js'
import {
  consumeModel,
  deleteByGrantId,
  deleteClient,
  destroyModel,
  findClient,
  findModel,
  findModelByUid,
  findModelByUserCode,
  gatehouseSessionActive,
  upsertModel,
  upsertRegisteredClient,
} from './store.js'

/**
 * Ends the SSO session behind an authorization request when the Gatehouse session it was signed in
 * from has ended (signed out, revoked or expired): the request then starts a new sign-in.
 */
export async function dropEndedSession(ctx: AuthContext, sessionId: string): Promise<void> {
  const row = await findModel(ctx, 'Session', sessionId)
  if (row?.gatehouseSessionId && !(await gatehouseSessionActive(ctx, row.gatehouseSessionId, new Date(ctx.clock.now())))) {
    await destroyModel(ctx, 'Session', sessionId)
  }
}

/**
 * The Gatehouse session of the request oidc-provider is serving, and for a token request the batch
 * its writes go to (set by the mount). Off while no request is in its hands (server/idle-scope.ts).
 */
export const gatehouseRequest = idleOff(new AsyncLocalStorage<{ sessionId: string | null; batch?: WriteBatch }>())

/** The open write batch of the current request, if any (see batch.ts). */
function openBatch(): WriteBatch | undefined {
  const batch = gatehouseRequest.getStore()?.batch
  return batch && !batch.closed ? batch : undefined
}

/** A stored row's payload, unless it has expired (Gatehouse's clock). */
function live(ctx: AuthContext, row: { payload: string; expiresAt: Date | null } | undefined): AdapterPayload | undefined {
  if (!row) return undefined
  if (row.expiresAt && row.expiresAt.getTime() <= ctx.clock.now()) return undefined
  return JSON.parse(row.payload) as AdapterPayload
}

/**
 * The row a model is stored as (the one rule, for the adapter and the fast token path):
 * `gatehouseSessionId` is the Gatehouse session an SSO session (kind Session) was signed in from.
 */
export function modelRow(
  ctx: AuthContext,
  kind: string,
  id: string,
  payload: AdapterPayload,
  expiresIn: number,
  gatehouseSessionId: string | null,
): OidcModelRow {
  return {
    kind,
    id,
    payload: JSON.stringify(payload),
    grantId: typeof payload.grantId === 'string' ? payload.grantId : null,
    uid: typeof payload.uid === 'string' ? payload.uid : null,
    userCode: typeof payload.userCode === 'string' ? payload.userCode : null,
    gatehouseSessionId: kind === 'Session' ? gatehouseSessionId : null,
    consumedAt: typeof payload.consumed === 'number' ? new Date(payload.consumed * 1000) : null,
    expiresAt: expiresIn ? new Date(ctx.clock.now() + expiresIn * 1000) : null,
  }
}

/** A model (not a client) by id as `batch`'s request sees it (its own writes first; no batch: the database). */
export async function findModelPayload(
  ctx: AuthContext,
  batch: WriteBatch | undefined,
  kind: string,
  id: string,
): Promise<AdapterPayload | undefined> {
  if (!batch) return live(ctx, await findModel(ctx, kind, id))
  const own = batch.overlaid(kind, id)
  if (own !== undefined) return live(ctx, own ?? undefined)
  return live(ctx, batch.read(kind, await findModel(ctx, kind, id)))
}

/** A model by uid as `batch`'s request sees it; a Session whose Gatehouse session has ended is not there (see findByUid). */
export async function findModelPayloadByUid(
  ctx: AuthContext,
  batch: WriteBatch | undefined,
  kind: string,
  uid: string,
): Promise<AdapterPayload | undefined> {
  const own = batch?.overlaidByUid(kind, uid)
  if (own) return live(ctx, own)
  const found = await findModelByUid(ctx, kind, uid)
  const row = batch ? batch.read(kind, found) : found
  if (row?.gatehouseSessionId && !(await gatehouseSessionActive(ctx, row.gatehouseSessionId, new Date(ctx.clock.now())))) return undefined
  return live(ctx, row)
}

/**
 * oidc-provider's storage on Gatehouse's database. Every model (Session, Interaction, Grant,
 * AuthorizationCode, AccessToken, RefreshToken, ClientCredentials, …) is a row keyed by kind and
 * id; expiry is kept from Gatehouse's clock and checked on every read, so a test clock expires a
 * code without waiting. Clients are read through the store's client cache, which any other
 * process's commit and this process's client writes empty: a client created, changed or deleted
 * by the CLI or the panel counts on the next request. During a token
 * request, writes go to its batch and reads see them (committed at once before the answer).
 */
export function databaseAdapter(ctx: AuthContext): new (kind: string) => Adapter {
  return class GatehouseAdapter implements Adapter {
    constructor(private readonly kind: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      // Only dynamic registration (RFC 7591/7592) saves clients through oidc-provider.
      if (this.kind === 'Client') {
        const tokenId = registrationRequest.getStore()?.tokenId ?? null
        const existing = await findClient(ctx, id)
        if (!existing && !tokenId) return
        if (existing && existing.registeredByToken === null) return
        await upsertRegisteredClient(
          ctx,
          registeredClientRow(id, payload as Record<string, unknown>, existing, tokenId, new Date(ctx.clock.now())),
        )
        return
      }
      // An SSO session remembers the Gatehouse session it was signed in from.
      const sessionId = this.kind === 'Session' ? (gatehouseRequest.getStore()?.sessionId ?? null) : null
      const row = modelRow(ctx, this.kind, id, payload, expiresIn, sessionId)
      const batch = openBatch()
      if (batch) batch.upsert(row)
      else await upsertModel(ctx, row)
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.kind === 'Client') {
        const row = await findClient(ctx, id)
        return row ? (clientMetadata(row) as AdapterPayload) : undefined
      }
      return findModelPayload(ctx, openBatch(), this.kind, id)
    }

    /**
     * By uid oidc-provider checks that the session a token expires with is still there: once its
     * Gatehouse session has ended (signed out, revoked, expired), it is not. (Read by its cookie,
     * `find`, it still is, so the end-session confirmation that follows a Gatehouse sign-out works;
     * an authorization request drops such a session first, see dropEndedSession.)
     */
    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return findModelPayloadByUid(ctx, openBatch(), this.kind, uid)
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const found = await findModelByUserCode(ctx, this.kind, userCode)
      const batch = openBatch()
      return live(ctx, batch ? batch.read(this.kind, found) : found)
    }

    async consume(id: string): Promise<void> {
      const batch = openBatch()
      if (batch) batch.consume(this.kind, id, new Date(ctx.clock.now()))
      else await consumeModel(ctx, this.kind, id, new Date(ctx.clock.now()))
    }

    async destroy(id: string): Promise<void> {
      if (this.kind === 'Client') {
        const existing = await findClient(ctx, id)
        if (existing?.registeredByToken) await deleteClient(ctx, id)
        return
      }
      const batch = openBatch()
      if (batch) batch.destroy(this.kind, id)
      else await destroyModel(ctx, this.kind, id)
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const batch = openBatch()
      if (batch) batch.revoke(this.kind, grantId)
      else await deleteByGrantId(ctx, this.kind, grantId)
    }
  }
}
