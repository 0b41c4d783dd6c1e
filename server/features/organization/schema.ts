import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { user } from '../../db/core-schema.js'

/**
 * The organization feature's tables (better-auth 1.7's organization plugin with teams): column
 * names are better-auth's; dates are epoch milliseconds. Gathered by server/features/tables.ts (server/schema.ts) for drizzle-kit.
 */

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })

export const organization = sqliteTable(
  'organization',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    slug: text('slug').notNull(),
    logo: text('logo'),
    metadata: text('metadata'),
    createdAt: timestamp('createdAt').notNull(),
  },
  (t) => [uniqueIndex('organization_slug_unique').on(t.slug)],
)

export const team = sqliteTable(
  'team',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    organizationId: text('organizationId')
      .notNull()
      .references(() => organization.id, { onDelete: 'cascade' }),
    createdAt: timestamp('createdAt').notNull(),
    updatedAt: timestamp('updatedAt'),
  },
  (t) => [index('team_organization_id_idx').on(t.organizationId)],
)

export const member = sqliteTable(
  'member',
  {
    id: text('id').primaryKey(),
    organizationId: text('organizationId')
      .notNull()
      .references(() => organization.id, { onDelete: 'cascade' }),
    userId: text('userId')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    role: text('role').notNull().default('member'),
    teamId: text('teamId').references(() => team.id, { onDelete: 'set null' }),
    createdAt: timestamp('createdAt').notNull(),
  },
  (t) => [
    index('member_organization_id_idx').on(t.organizationId),
    index('member_user_org_role_idx').on(t.userId, t.organizationId, t.role),
    uniqueIndex('member_org_user_unique').on(t.organizationId, t.userId),
  ],
)

/**
 * Team membership (better-auth 1.7's `teamMember`): a user may belong to several teams of an
 * organization. `member.teamId` is the 1.2-era single team, still filled with the first team.
 */
export const teamMember = sqliteTable(
  'teamMember',
  {
    id: text('id').primaryKey(),
    teamId: text('teamId')
      .notNull()
      .references(() => team.id, { onDelete: 'cascade' }),
    userId: text('userId')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    createdAt: timestamp('createdAt'),
  },
  (t) => [uniqueIndex('team_member_team_user_unique').on(t.teamId, t.userId), index('team_member_user_team_idx').on(t.userId, t.teamId)],
)

export const invitation = sqliteTable(
  'invitation',
  {
    id: text('id').primaryKey(),
    organizationId: text('organizationId')
      .notNull()
      .references(() => organization.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    role: text('role'),
    status: text('status').notNull().default('pending'),
    teamId: text('teamId').references(() => team.id, { onDelete: 'set null' }),
    inviterId: text('inviterId')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    expiresAt: timestamp('expiresAt').notNull(),
    createdAt: timestamp('createdAt'),
  },
  (t) => [index('invitation_organization_id_idx').on(t.organizationId), index('invitation_email_idx').on(t.email)],
)

export type OrganizationRow = typeof organization.$inferSelect
export type MemberRow = typeof member.$inferSelect
export type InvitationRow = typeof invitation.$inferSelect
export type TeamRow = typeof team.$inferSelect
export type TeamMemberRow = typeof teamMember.$inferSelect
