import { z } from 'zod'

/** `username.*` (SPEC §5 Username): better-auth's username plugin options. */
export const usernameConfig = z
  .object({
    minUsernameLength: z.number().int().min(1).default(3),
    maxUsernameLength: z.number().int().min(1).default(30),
  })
  .prefault({})

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { username: usernameConfig }
