import { integer } from 'drizzle-orm/sqlite-core'

/** The two-factor feature's column on the core `user` table (better-auth's twoFactor plugin). db/core-schema.ts spreads it in. */
export const twoFactorColumns = {
  user: {
    twoFactorEnabled: integer('twoFactorEnabled', { mode: 'boolean' }).default(false),
  },
}

/** A new user has no second factor. */
export const twoFactorUserDefaults = (_config: unknown) => ({
  twoFactorEnabled: false,
})
