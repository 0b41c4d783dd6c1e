import { text } from 'drizzle-orm/sqlite-core'

/** The last-login-method feature's column on the core `user` table (better-auth's lastLoginMethod plugin, `storeInDatabase`). */
export const lastLoginMethodColumns = {
  user: {
    lastLoginMethod: text('lastLoginMethod'),
  },
}

/** A new user has no last login method until it signs in. */
export const lastLoginMethodUserDefaults = (_config: unknown) => ({
  lastLoginMethod: null,
})

/** better-auth shows lastLoginMethod only with the plugin's storeInDatabase: on a user who has one. */
export const lastLoginMethodUserFieldAccess = { lastLoginMethod: 'shown-when-set' } as const
