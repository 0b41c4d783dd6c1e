import { type AnySQLiteColumn, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

/**
 * The username feature's columns on the core `user` table, as better-auth's username plugin declares
 * its `schema.user.fields`. server/schema.ts builds the table with them; both dialects' migrations
 * are generated from there.
 */
export const usernameColumns = {
  user: {
    username: text('username'),
    displayUsername: text('displayUsername'),
  },
}

export const usernameIndexes = {
  user: (t: { username: AnySQLiteColumn }) => [uniqueIndex('user_username_unique').on(t.username)],
}

/** A new user has no username unless its creator gives one. */
export const usernameUserDefaults = (_config: unknown) => ({
  username: null,
  displayUsername: null,
})
