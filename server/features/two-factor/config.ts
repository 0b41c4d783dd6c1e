import { z } from 'zod'

const seconds = z.number().int().min(0)

/**
 * `twoFactor.*`: better-auth's twoFactor plugin options where one exists (issuer, totpOptions,
 * otpOptions, backupCodeOptions, trustDeviceMaxAge, twoFactorCookieMaxAge), plus Gatehouse's
 * enforcement rule. Off by default.
 */
export const twoFactorConfig = z
  .object({
    enabled: z.boolean().default(false),
    /** Shown by authenticator apps; unset: mail.appName. */
    issuer: z.string().min(1).optional(),
    totpOptions: z
      .object({
        digits: z.union([z.literal(6), z.literal(8)]).default(6),
        period: z.number().int().min(15).max(120).default(30),
        /** Time steps accepted either side of now (±1 = a code of the previous or next 30 s). */
        window: z.number().int().min(0).max(3).default(1),
        disable: z.boolean().default(false),
      })
      .prefault({}),
    otpOptions: z
      .object({
        /** One-time codes by mail (through the outbox). */
        enabled: z.boolean().default(true),
        /** Minutes a mailed code stays valid (better-auth's unit). */
        period: z.number().int().min(1).max(60).default(3),
        digits: z.number().int().min(6).max(10).default(6),
        allowedAttempts: z.number().int().min(1).default(5),
      })
      .prefault({}),
    backupCodeOptions: z
      .object({
        amount: z.number().int().min(1).max(50).default(10),
        length: z.number().int().min(8).max(32).default(10),
      })
      .prefault({}),
    /** Attempts allowed on one sign-in challenge before a new sign-in is needed. */
    allowedAttempts: z.number().int().min(1).default(5),
    trustDeviceMaxAge: seconds.min(60).default(2_592_000),
    twoFactorCookieMaxAge: seconds.min(60).default(600),
    /** Gatehouse: users holding one of `roles` must have a second factor (TOTP or a passkey). */
    enforcement: z
      .object({
        roles: z.array(z.string().min(1)).default([]),
        /** Seconds, from the first sign-in under the rule, during which such a user may still sign in without one. */
        gracePeriod: seconds.default(604_800),
      })
      .prefault({}),
  })
  .prefault({})

export type TwoFactorConfig = z.output<typeof twoFactorConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { twoFactor: twoFactorConfig }
