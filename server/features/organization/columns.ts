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
