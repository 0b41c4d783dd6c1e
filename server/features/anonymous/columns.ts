import { integer } from 'drizzle-orm/sqlite-core'

/**
 * The anonymous feature's column on the core `user` table (better-auth's anonymous plugin): true for
 * an anonymous user; null on users created while the feature was off (the wire then shows no
 * isAnonymous, as better-auth without the plugin). db/core-schema.ts spreads it in.
 */
export const anonymousColumns = {
  user: {
    isAnonymous: integer('isAnonymous', { mode: 'boolean' }),
  },
}
