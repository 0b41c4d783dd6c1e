import { z } from 'zod'
import { mutation, none, query } from '../../panel-frame/op.js'

/** The control panel's signing-key operations (zod only: shared with the renderer). Times are epoch ms. */

export const signingKeyViewSchema = z.object({
  id: z.string(),
  alg: z.string(),
  crv: z.string().nullable(),
  createdAt: z.number(),
  retiredAt: z.number().nullable(),
  removedAt: z.number().nullable(),
  signing: z.boolean(),
})
export type SigningKeyView = z.output<typeof signingKeyViewSchema>

export const jwtContract = {
  'jwt.keys': query(
    'Signing keys: the one that signs, and retired ones still published in the JWKS',
    none,
    z.object({ keys: z.array(signingKeyViewSchema), gracePeriod: z.number(), alg: z.string(), enabled: z.boolean() }),
  ),
  'jwt.rotate': mutation(
    'Rotates the signing key: a new key signs from now on; the old one stays in the JWKS for the grace period',
    none,
    z.object({ id: z.string(), alg: z.string(), retired: z.array(z.string()) }),
  ),
  'jwt.settings': query('The effective `jwt.*` configuration', none, z.record(z.string(), z.unknown())),
  'jwt.configure': mutation(
    'Applies a JSON Merge Patch to the `jwt.*` configuration, live (validated by the config schema)',
    z.object({ patch: z.record(z.string(), z.unknown()), base: z.record(z.string(), z.unknown()).optional() }).strict(),
    z.record(z.string(), z.unknown()),
  ),
}
