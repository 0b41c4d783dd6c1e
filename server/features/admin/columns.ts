import { integer, text } from 'drizzle-orm/sqlite-core'

/**
 * The admin feature's columns on the core tables, as better-auth's admin plugin declares them: the
 * user's role and ban, and the impersonating admin on a session. server/schema.ts builds the tables with them.
 */
export const adminColumns = {
  user: {
    role: text('role').default('user'),
    banned: integer('banned', { mode: 'boolean' }).default(false),
    banReason: text('banReason'),
    banExpires: integer('banExpires', { mode: 'timestamp_ms' }),
  },
  session: {
    impersonatedBy: text('impersonatedBy'),
  },
}

/** What a new session's admin column holds unless its creator gives it (core sessions.ts createSession): no impersonation. */
export const adminSessionDefaults = () => ({ impersonatedBy: null as string | null })

/** What a new user's admin columns hold unless its creator gives them (core users.ts unsavedUser): the configured default role, no ban. */
export const adminUserDefaults = (config: { admin: { defaultRole: string } }) => ({
  role: config.admin.defaultRole,
  banned: false,
  banReason: null,
  banExpires: null,
})

/**
 * How the wire treats the admin columns (core users.ts): a client never sets them on itself
 * (better-auth's admin plugin: `input: false`, refused with FIELD_NOT_ALLOWED).
 */
export const adminUserFieldAccess = {
  role: 'protected',
  banned: 'protected',
  banReason: 'protected',
  banExpires: 'protected',
} as const
