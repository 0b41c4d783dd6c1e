import { z } from 'zod'

/** `multiSession.*`: better-auth's multi-session plugin options. */
export const multiSessionConfig = z
  .object({
    enabled: z.boolean().default(false),
    /** How many accounts one browser keeps signed in at once (better-auth: 5). */
    maximumSessions: z.number().int().min(1).max(100).default(5),
  })
  .prefault({})

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { multiSession: multiSessionConfig }
