import { z } from 'zod'

/**
 * `magicLink.*`: better-auth's magicLink plugin options. `expiresIn` in seconds (300), `disableSignUp`
 * refuses links for unknown addresses at verification (`new_user_signup_disabled`), `rateLimit` is the
 * plugin's rule on /sign-in/magic-link and /magic-link/verify (5 per 60 s).
 */
export const magicLinkConfig = z
  .object({
    enabled: z.boolean().default(false),
    expiresIn: z.number().int().min(1).default(300),
    disableSignUp: z.boolean().default(false),
    rateLimit: z.object({ window: z.number().int().min(1).default(60), max: z.number().int().min(1).default(5) }).prefault({}),
  })
  .prefault({})

export type MagicLinkConfig = z.output<typeof magicLinkConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { magicLink: magicLinkConfig }
