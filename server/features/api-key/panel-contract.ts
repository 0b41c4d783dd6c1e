import { z } from 'zod'
import { mutation, none, ok, query } from '../../panel-frame/op.js'

/** The control panel's API-key operations (zod only: shared with the renderer). Times are epoch ms. */

const ms = z.number()
const id = z.string().min(1).max(200)
const permissions = z.record(z.string().min(1).max(64), z.array(z.string().min(1).max(64)).max(64))

export const apiKeyViewSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  start: z.string().nullable(),
  prefix: z.string().nullable(),
  referenceId: z.string(),
  ownerEmail: z.string().nullable(),
  ownerName: z.string().nullable(),
  enabled: z.boolean(),
  remaining: z.number().nullable(),
  refillAmount: z.number().nullable(),
  refillInterval: z.number().nullable(),
  rateLimitEnabled: z.boolean(),
  rateLimitTimeWindow: z.number().nullable(),
  rateLimitMax: z.number().nullable(),
  requestCount: z.number(),
  lastRequest: ms.nullable(),
  expiresAt: ms.nullable(),
  createdAt: ms,
  updatedAt: ms,
  permissions: permissions.nullable(),
})
export type ApiKeyView = z.output<typeof apiKeyViewSchema>

export const apiKeyContract = {
  'apiKey.list': query(
    'API keys, newest first; all of them or one user’s, searchable by owner email, name or id, or key name',
    z
      .object({
        userId: id.optional(),
        search: z.string().max(320).optional(),
        limit: z.number().int().min(1).max(500).default(50),
        offset: z.number().int().min(0).default(0),
      })
      .strict(),
    z.object({ keys: z.array(apiKeyViewSchema), total: z.number() }),
  ),
  'apiKey.create': mutation(
    'Creates a key for a user; the secret is in this answer only',
    z
      .object({
        userId: id,
        name: z.string().max(200).optional(),
        prefix: z.string().max(64).optional(),
        /** Seconds. */
        expiresIn: z.number().int().min(1).optional(),
        remaining: z.number().int().min(0).optional(),
        refillAmount: z.number().int().min(1).optional(),
        /** Milliseconds. */
        refillInterval: z.number().int().min(1).optional(),
        rateLimitEnabled: z.boolean().optional(),
        rateLimitTimeWindow: z.number().int().min(1).optional(),
        rateLimitMax: z.number().int().min(1).optional(),
        permissions: permissions.optional(),
      })
      .strict(),
    z.object({ key: z.string(), apiKey: apiKeyViewSchema }),
  ),
  'apiKey.setEnabled': mutation(
    'Disables or re-enables a key (takes effect on the next request)',
    z.object({ keyId: id, enabled: z.boolean() }).strict(),
    apiKeyViewSchema,
  ),
  'apiKey.delete': mutation('Deletes a key (takes effect on the next request)', z.object({ keyId: id }).strict(), ok),
  'apiKey.settings': query('The effective `apiKey.*` configuration', none, z.record(z.string(), z.unknown())),
  'apiKey.configure': mutation(
    'Applies a JSON Merge Patch to the `apiKey.*` configuration, live (validated by the config schema)',
    z.object({ patch: z.record(z.string(), z.unknown()), base: z.record(z.string(), z.unknown()).optional() }).strict(),
    z.record(z.string(), z.unknown()),
  ),
}
