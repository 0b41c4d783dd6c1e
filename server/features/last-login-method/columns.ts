import { text } from 'drizzle-orm/sqlite-core'

/** The last-login-method feature's column on the core `user` table (better-auth's lastLoginMethod plugin, `storeInDatabase`). */
export const lastLoginMethodColumns = {
  user: {
    lastLoginMethod: text('lastLoginMethod'),
  },
}
