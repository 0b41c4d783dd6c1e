import { z } from 'zod'
import type { ConfigCheck } from '../../feature.js'

const seconds = z.number().int().min(0)

/** `emailAndPassword.*`: better-auth's option names. */
export const emailAndPasswordConfig = z
  .object({
    enabled: z.boolean().default(true),
    disableSignUp: z.boolean().default(false),
    minPasswordLength: z.number().int().min(1).default(8),
    maxPasswordLength: z.number().int().min(1).default(128),
    requireEmailVerification: z.boolean().default(false),
    autoSignIn: z.boolean().default(true),
    resetPasswordTokenExpiresIn: seconds.default(3600),
    revokeSessionsOnPasswordReset: z.boolean().default(false),
    /** better-auth's `sendResetPassword` hook, as a switch: false answers "Reset password isn't enabled". */
    sendResetPassword: z.boolean().default(true),
  })
  .prefault({})

/** `emailVerification.*`: better-auth's option names. */
export const emailVerificationConfig = z
  .object({
    sendOnSignUp: z.boolean().default(false),
    autoSignInAfterVerification: z.boolean().default(false),
    expiresIn: seconds.default(3600),
    /** better-auth's `sendVerificationEmail` hook, as a switch: false answers "Verification email isn't enabled". */
    sendVerificationEmail: z.boolean().default(true),
  })
  .prefault({})

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { emailAndPassword: emailAndPasswordConfig, emailVerification: emailVerificationConfig }

/** The shortest password allowed may not exceed the longest (config-schema.ts runs it on every parse). */
export const configChecks: ConfigCheck<{ emailAndPassword: z.output<typeof emailAndPasswordConfig> }> = ({ emailAndPassword }) =>
  emailAndPassword.minPasswordLength > emailAndPassword.maxPasswordLength
    ? [{ path: ['emailAndPassword', 'minPasswordLength'], message: 'must not exceed emailAndPassword.maxPasswordLength' }]
    : []
