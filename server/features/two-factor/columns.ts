import { integer } from 'drizzle-orm/sqlite-core'

/** The two-factor feature's column on the core `user` table (better-auth's twoFactor plugin). server/schema.ts builds the table with it. */
export const twoFactorColumns = {
  user: {
    twoFactorEnabled: integer('twoFactorEnabled', { mode: 'boolean' }).default(false),
  },
}

/** A new user has no second factor. */
export const twoFactorUserDefaults = (_config: unknown) => ({
  twoFactorEnabled: false,
})
