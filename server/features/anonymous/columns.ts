import { integer } from 'drizzle-orm/sqlite-core'

/**
 * The anonymous feature's column on the core `user` table (better-auth's anonymous plugin): true for
 * an anonymous user; null on users created while the feature was off (the wire then shows no
 * isAnonymous, as better-auth without the plugin). server/schema.ts builds the table with it.
 */
export const anonymousColumns = {
  user: {
    isAnonymous: integer('isAnonymous', { mode: 'boolean' }),
  },
}

/** A new user's isAnonymous unless its creator gives it: false while the feature is on (better-auth's plugin default), else null. */
export const anonymousUserDefaults = (config: { anonymous: { enabled: boolean } }) => ({
  isAnonymous: config.anonymous.enabled ? false : null,
})

/** isAnonymous is shown only on users made while the feature was on (better-auth: with the plugin). */
export const anonymousUserFieldAccess = { isAnonymous: 'shown-when-set' } as const
