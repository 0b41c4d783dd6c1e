import { z } from 'zod'
import type { ConfigCheck } from '../../feature.js'

/** `username.*` (SPEC §5 Username): better-auth's username plugin options. */
export const usernameConfig = z
  .object({
    minUsernameLength: z.number().int().min(1).default(3),
    maxUsernameLength: z.number().int().min(1).default(30),
  })
  .prefault({})

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { username: usernameConfig }

/** The shortest username allowed may not exceed the longest (config-schema.ts runs it on every parse). */
export const configChecks: ConfigCheck<{ username: z.output<typeof usernameConfig> }> = ({ username }) =>
  username.minUsernameLength > username.maxUsernameLength
    ? [{ path: ['username', 'minUsernameLength'], message: 'must not exceed username.maxUsernameLength' }]
    : []
