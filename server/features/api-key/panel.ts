import { findUserByEmail, findUserById } from '../../core/users.js'
import type { PanelEnv } from '../../panel-frame/env.js'
import { sectionSettings } from '../../panel-frame/settings-ops.js'
import { apiKeyError, ownerNotFound } from './errors.js'
import { createApiKey, deleteApiKey, toWire, updateApiKey } from './keys.js'
import type { ApiKeyView } from './panel-contract.js'
import type { ApiKeyRow } from './schema.js'
import { findKeyById, listAllKeys } from './store.js'

const PANEL_META = { ipAddress: null, userAgent: 'gatehouse-panel' }
const t = (d: Date | null): number | null => (d ? d.getTime() : null)

function view(row: ApiKeyRow, owner: { ownerEmail: string | null; ownerName: string | null }): ApiKeyView {
  const wire = toWire(row)
  return {
    id: row.id,
    name: row.name,
    start: row.start,
    prefix: row.prefix,
    referenceId: row.referenceId,
    ...owner,
    enabled: row.enabled,
    remaining: row.remaining,
    refillAmount: row.refillAmount,
    refillInterval: row.refillInterval,
    rateLimitEnabled: row.rateLimitEnabled,
    rateLimitTimeWindow: row.rateLimitTimeWindow,
    rateLimitMax: row.rateLimitMax,
    requestCount: row.requestCount,
    lastRequest: t(row.lastRequest),
    expiresAt: t(row.expiresAt),
    createdAt: row.createdAt.getTime(),
    updatedAt: row.updatedAt.getTime(),
    permissions: (wire.permissions as Record<string, string[]> | null) ?? null,
  }
}

/** The panel acts as the server side of the plugin (it may set quotas, limits and permissions). */
export const apiKeyPanel = (env: PanelEnv) => {
  const ctx = env.gatehouse.ctx
  const server = (userId?: string) => ({ kind: 'server' as const, userId, meta: PANEL_META })
  const ownerOf = async (referenceId: string) => {
    const owner = await findUserById(ctx, referenceId)
    return { ownerEmail: owner?.email ?? null, ownerName: owner?.name ?? null }
  }
  const settings = sectionSettings(env, 'apiKey')
  return {
    'apiKey.settings': settings.read,
    'apiKey.configure': settings.apply,
    'apiKey.list': async (input: { userId?: string; search?: string; limit: number; offset: number }) => {
      const { keys, total } = await listAllKeys(ctx, input)
      return { keys: keys.map((k) => view(k.row, k)), total }
    },
    'apiKey.create': async (input: {
      userId: string
      name?: string
      prefix?: string
      expiresIn?: number
      remaining?: number
      refillAmount?: number
      refillInterval?: number
      rateLimitEnabled?: boolean
      rateLimitTimeWindow?: number
      rateLimitMax?: number
      permissions?: Record<string, string[]>
    }) => {
      const { userId: named, remaining, expiresIn, ...rest } = input
      // The owner field takes a user id or an email; either must name a user.
      const owner = named.includes('@') ? await findUserByEmail(ctx, named) : await findUserById(ctx, named)
      if (!owner) throw ownerNotFound()
      const created = await createApiKey(ctx, { ...rest, remaining: remaining ?? null, expiresIn: expiresIn ?? null }, server(owner.id))
      const row = await findKeyById(ctx, created.id)
      if (!row) throw new Error('created key vanished')
      return { key: created.key, apiKey: view(row, await ownerOf(row.referenceId)) }
    },
    'apiKey.setEnabled': async ({ keyId, enabled }: { keyId: string; enabled: boolean }) => {
      const existing = await findKeyById(ctx, keyId)
      if (!existing) throw apiKeyError(404, 'KEY_NOT_FOUND')
      const updated = await updateApiKey(ctx, { keyId, enabled }, server(existing.referenceId))
      const row = await findKeyById(ctx, updated.id)
      if (!row) throw new Error('updated key vanished')
      return view(row, await ownerOf(row.referenceId))
    },
    'apiKey.delete': async ({ keyId }: { keyId: string }) => await deleteApiKey(ctx, keyId, server()),
  }
}
