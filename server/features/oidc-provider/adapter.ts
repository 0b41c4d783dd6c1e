import type { Adapter, AdapterPayload } from 'oidc-provider'
import type { AuthContext } from '../../auth/context.js'
import { clientMetadata } from './clients.js'
import {
  consumeModel,
  deleteByGrantId,
  destroyModel,
  findClient,
  findModel,
  findModelByUid,
  findModelByUserCode,
  upsertModel,
} from './store.js'

/**
 * oidc-provider's storage on Gatehouse's database. Every model (Session, Interaction, Grant,
 * AuthorizationCode, AccessToken, RefreshToken, ClientCredentials, …) is a row keyed by kind and
 * id; expiry is kept from Gatehouse's clock and checked on every read, so a test clock expires a
 * code without waiting. Clients are read from the client table at each use (no cache): a client
 * created, changed or deleted by the CLI or the panel counts on the next request.
 */
export function databaseAdapter(ctx: AuthContext): new (kind: string) => Adapter {
  return class GatehouseAdapter implements Adapter {
    constructor(private readonly kind: string) {}

    private live(row: { payload: string; expiresAt: Date | null } | undefined): AdapterPayload | undefined {
      if (!row) return undefined
      if (row.expiresAt && row.expiresAt.getTime() <= ctx.clock.now()) return undefined
      return JSON.parse(row.payload) as AdapterPayload
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      if (this.kind === 'Client') return
      await upsertModel(ctx, {
        kind: this.kind,
        id,
        payload: JSON.stringify(payload),
        grantId: typeof payload.grantId === 'string' ? payload.grantId : null,
        uid: typeof payload.uid === 'string' ? payload.uid : null,
        userCode: typeof payload.userCode === 'string' ? payload.userCode : null,
        consumedAt: typeof payload.consumed === 'number' ? new Date(payload.consumed * 1000) : null,
        expiresAt: expiresIn ? new Date(ctx.clock.now() + expiresIn * 1000) : null,
      })
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.kind === 'Client') {
        const row = await findClient(ctx, id)
        return row ? (clientMetadata(row) as AdapterPayload) : undefined
      }
      return this.live(await findModel(ctx, this.kind, id))
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.live(await findModelByUid(ctx, this.kind, uid))
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.live(await findModelByUserCode(ctx, this.kind, userCode))
    }

    async consume(id: string): Promise<void> {
      await consumeModel(ctx, this.kind, id, new Date(ctx.clock.now()))
    }

    async destroy(id: string): Promise<void> {
      await destroyModel(ctx, this.kind, id)
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await deleteByGrantId(ctx, this.kind, grantId)
    }
  }
}
