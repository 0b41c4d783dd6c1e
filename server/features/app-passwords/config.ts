import { z } from 'zod'

/**
 * `appPasswords.*`. App passwords are revoked with every step that evicts an intruder (a password
 * change or reset, an admin's set-password, a ban, "revoke all sessions", a deletion);
 * `keepOnPasswordChange` keeps them across a change the person made themself with their current
 * password (never across a reset or an admin's set-password).
 */
export const appPasswordsConfig = z
  .object({
    keepOnPasswordChange: z.boolean().default(false),
  })
  .prefault({})

export type AppPasswordsConfig = z.output<typeof appPasswordsConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { appPasswords: appPasswordsConfig }
