import { z } from 'zod'
import { socialProvidersSchema } from './options.js'

/**
 * The social sign-in config sections, under better-auth's keys: `socialProviders.<id>` (the 18
 * providers, options.ts) and `account.accountLinking`. Imported by config/schema.ts under the
 * same keys; free of the engine's code.
 */
export const socialProvidersConfig = socialProvidersSchema

export const accountConfig = z
  .object({
    accountLinking: z
      .object({
        enabled: z.boolean().default(true),
        trustedProviders: z.array(z.string()).default([]),
        allowDifferentEmails: z.boolean().default(false),
        allowUnlinkingAll: z.boolean().default(false),
      })
      .prefault({}),
  })
  .prefault({})
