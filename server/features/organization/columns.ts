import { text } from 'drizzle-orm/sqlite-core'

/**
 * The organization feature's columns on the core `session` table (better-auth's organization plugin):
 * the organization and team the session acts in, null when none. server/schema.ts builds the tables with them.
 */
export const organizationColumns = {
  session: {
    activeOrganizationId: text('activeOrganizationId'),
    activeTeamId: text('activeTeamId'),
  },
}

/** What a new session's organization columns hold unless its creator gives them (core sessions.ts createSession): no active organization or team. */
export const organizationSessionDefaults = () => ({ activeOrganizationId: null as string | null, activeTeamId: null as string | null })
