import { z } from 'zod'

/**
 * `emailOTP.*`: better-auth's emailOTP plugin options. `otpLength` digits (6), valid `expiresIn`
 * seconds (300), `allowedAttempts` wrong guesses per code (3; then the code is void),
 * `disableSignUp` (no code for unknown addresses, no user created by /sign-in/email-otp),
 * `changeEmail`, `rateLimit`: the plugin's rule on each of its paths (3 per 60 s).
 */
export const emailOTPConfig = z
  .object({
    enabled: z.boolean().default(false),
    otpLength: z.number().int().min(4).max(12).default(6),
    expiresIn: z.number().int().min(1).default(300),
    allowedAttempts: z.number().int().min(1).default(3),
    disableSignUp: z.boolean().default(false),
    /**
     * Email change by code (POST /email-otp/request-email-change, /email-otp/change-email):
     * `enabled`; `verifyCurrentEmail` also asks for an `email-verification` code of the current address.
     */
    changeEmail: z.object({ enabled: z.boolean().default(false), verifyCurrentEmail: z.boolean().default(false) }).prefault({}),
    rateLimit: z.object({ window: z.number().int().min(1).default(60), max: z.number().int().min(1).default(3) }).prefault({}),
  })
  .prefault({})

export type EmailOTPConfig = z.output<typeof emailOTPConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { emailOTP: emailOTPConfig }
