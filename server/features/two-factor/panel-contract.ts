import { z } from 'zod'
import { mutation, none, ok, query } from '../../panel-frame/op.js'

const userId = z.object({ userId: z.string().min(1) })

/** Panel operations of the two-factor and passkey features (zod only: shared with the renderer). */
export const twoFactorContract = {
  'twoFactor.overview': query(
    'Users with and without a second factor, and the enforcement rule',
    none,
    z.object({
      enabled: z.boolean(),
      passkeyEnabled: z.boolean(),
      users: z.number(),
      withTotp: z.number(),
      withPasskey: z.number(),
      withAny: z.number(),
      without: z.number(),
      enforcement: z.object({ roles: z.array(z.string()), gracePeriod: z.number() }),
    }),
  ),
  'twoFactor.userFactors': query(
    "A user's second factors and passkeys",
    userId,
    z.object({
      twoFactorEnabled: z.boolean(),
      totp: z.enum(['none', 'pending', 'verified']),
      backupCodesLeft: z.number().nullable(),
      trustedDevices: z.number(),
      graceDeadline: z.number().nullable(),
      passkeys: z.array(
        z.object({
          id: z.string(),
          name: z.string().nullable(),
          deviceType: z.string(),
          backedUp: z.boolean(),
          counter: z.number(),
          createdAt: z.number().nullable(),
        }),
      ),
    }),
  ),
  'twoFactor.reset': mutation("Turn a user's two-factor off (secret, backup codes, trusted devices); the user is told by mail", userId, ok),
  'twoFactor.resetGrace': mutation("Restart a user's enrolment grace period", userId, ok),
  'twoFactor.setEnforcement': mutation(
    'Require a second factor for these roles (either value may be left out: a value set at start-up is, and naming one is refused with 409 SET_AT_STARTUP)',
    z.object({ roles: z.array(z.string().min(1)).optional(), gracePeriod: z.number().int().min(0).optional() }),
    ok,
  ),
  'passkey.remove': mutation(
    "Remove one of a user's passkeys; the user is told by mail",
    z.object({ userId: z.string().min(1), passkeyId: z.string().min(1) }),
    ok,
  ),
}
