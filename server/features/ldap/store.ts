import { and, asc, eq, fillPlaceholders, isNull, or, type SQL, sql } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { member, teamMember, user } from '../../db/schema.js'
import { firstRow } from '../../db/storage.js'

/**
 * The LDAP directory's reads. Binds read one person at a time (findUserByUid, findUser); the
 * directory's index (directory-index.ts) reads everyone in chunks, in a stable order, as arrays of
 * plain values (`storage.rows`: no per-row object, no Date), so loading a hundred thousand people
 * never holds the event loop for long nor needs one huge result in memory at once.
 */

/**
 * A timestamp column as epoch milliseconds, read as a plain number on both engines (SQLite stores
 * them so; on PostgreSQL the whole milliseconds of the timestamptz, as drizzle's Date would hold).
 */
const epochMs = (ctx: AuthContext, column: typeof user.createdAt | typeof user.banExpires): SQL<number> =>
  ctx.storage.dialect === 'postgres' ? sql<number>`floor(extract(epoch from ${column}) * 1000)::float8` : sql<number>`${column}`

/**
 * A person as the directory's index reads them, one array per row (no object, no Date: a hundred
 * thousand of these are read at each load): the directory's columns, times as epoch milliseconds,
 * and what their groups are made of as one string (`sources`).
 */
export type DirectoryRow = [
  id: string,
  name: string,
  email: string,
  emailVerified: boolean,
  createdAt: number,
  updatedAt: number,
  username: string | null,
  banned: boolean | null,
  banExpires: number | null,
  sources: string,
]

/** Positions in a DirectoryRow. */
export const ROW = {
  id: 0,
  name: 1,
  email: 2,
  emailVerified: 3,
  createdAt: 4,
  updatedAt: 5,
  username: 6,
  banned: 7,
  banExpires: 8,
  sources: 9,
} as const

/** SQLite answers booleans as 0/1, PostgreSQL as booleans. */
const bool = (value: unknown): boolean => value === true || value === 1

/** Which group sources a load reads (the group rule's needs): memberships, team memberships. */
export interface SourcesWanted {
  memberships: boolean
  teams: boolean
}

/** A compiled select: its SQL text and its parameters (drizzle's placeholders among them). */
type Compiled = { sql: string; params: unknown[] }

/**
 * The reader of one load's chunks: up to `limit` people after a position (createdAt in epoch
 * milliseconds, id), oldest first, as arrays (`storage.rows`). The select is built and compiled
 * once per load (`directoryPeopleStatements`) and each chunk fills in only its position: building
 * and compiling it per chunk of 1 000 took 79 ms of a PostgreSQL cold load of 100 000 people in a
 * profile (docs/BENCHMARKS.md, round 7 session 9). The row comparison `(createdAt, id) > (?, ?)` lets both engines start each chunk at
 * its place in the createdAt index instead of scanning from the start.
 */
export function directoryPeopleReader(
  ctx: AuthContext,
  limit: number,
  wanted: SourcesWanted,
): (after: { createdAt: number; id: string } | null) => Promise<DirectoryRow[]> {
  const statements = directoryPeopleStatements(ctx, limit, wanted)
  return async (after) => {
    const compiled = after ? chunkAfter(statements.next, after) : statements.first
    const rows = (await ctx.storage.rows({ toSQL: () => compiled })) as DirectoryRow[]
    for (const row of rows) {
      row[ROW.emailVerified] = bool(row[ROW.emailVerified])
      const banned = row[ROW.banned] as unknown
      row[ROW.banned] = banned === null ? null : bool(banned)
    }
    return rows
  }
}

/** A load's two selects, compiled: the first chunk's, and the next chunks' with the position as placeholders. */
export function directoryPeopleStatements(ctx: AuthContext, limit: number, wanted: SourcesWanted): { first: Compiled; next: Compiled } {
  return {
    first: directoryPeopleQuery(ctx, null, limit, wanted).toSQL(),
    next: directoryPeopleQuery(ctx, 'placeholders', limit, wanted).toSQL(),
  }
}

/** The next chunks' select at a position (the createdAt encoded by the column, as a Date would be). */
export function chunkAfter(next: Compiled, after: { createdAt: number; id: string }): Compiled {
  return { sql: next.sql, params: fillPlaceholders(next.params, { createdAt: new Date(after.createdAt), id: after.id }) }
}

/**
 * A person's group sources as one JSON text, `[role, [[organization id, member role], …], [team
 * id, …]]` (either list null or [] when there is none, or when the rule does not need it): equal
 * for people whose sources were read equal, so the index runs the group rule once per distinct
 * text, and the load reads no membership row into JavaScript. Ids, not names: each subquery is one
 * range of a covering index, member (userId, organizationId, role) or teamMember (userId, teamId)
 * (migrations 0024 / pg 0025: the row itself is not looked up), with no join (a join per person
 * costs PostgreSQL about 20 µs a row); the load maps ids to slugs and names (organization's store:
 * `listOrganizationSlugs`, `listTeamNames`) once per distinct text.
 */
function sourcesColumn(ctx: AuthContext, wanted: SourcesWanted): SQL<string> {
  if (ctx.storage.dialect === 'postgres') {
    const memberships = wanted.memberships
      ? sql`(select json_agg(json_build_array(${member.organizationId}, ${member.role})) from ${member} where ${member.userId} = ${user.id})`
      : sql`null::json`
    const teams = wanted.teams
      ? sql`(select json_agg(${teamMember.teamId}) from ${teamMember} where ${teamMember.userId} = ${user.id})`
      : sql`null::json`
    return sql<string>`json_build_array(${user.role}, ${memberships}, ${teams})::text`
  }
  // The subqueries' JSON subtype reaches json_array, which nests their arrays rather than quoting
  // them as strings (no json() around them: it would parse each text again, about 45 ms a load of
  // 100 000 people). Were a SQLite to drop the subtype, the groups would go wrong and
  // tests/features/ldap/scale.test.ts ('holds the groups personOf reads') would fail.
  const memberships = wanted.memberships
    ? sql`(select json_group_array(json_array(${member.organizationId}, ${member.role})) from ${member} where ${member.userId} = ${user.id})`
    : sql`null`
  const teams = wanted.teams
    ? sql`(select json_group_array(${teamMember.teamId}) from ${teamMember} where ${teamMember.userId} = ${user.id})`
    : sql`null`
  return sql<string>`json_array(${user.role}, ${memberships}, ${teams})`
}

/** The parts of a `sources` text (`sourcesColumn`): the role, [organization id, member role] pairs, team ids. */
export function parseSources(text: string): { role: string | null; memberships: Array<[string, string]>; teams: string[] } {
  const [role, memberships, teams] = JSON.parse(text) as [string | null, Array<[string, string]> | null, string[] | null]
  return { role, memberships: memberships ?? [], teams: teams ?? [] }
}

/**
 * The select of a load's chunk (not run): a keyset chunk in the directory's order, one range of
 * the index `user (createdAt, id)` (migrations 0023 / pg 0024) on both engines, no sort; after a
 * position given as placeholders (`chunkAfter` fills them in), or from the start.
 */
function directoryPeopleQuery(ctx: AuthContext, after: 'placeholders' | null, limit: number, wanted: SourcesWanted) {
  // The position's createdAt goes through the column's encoder when filled in (drizzle's
  // fillPlaceholders), as a Date parameter would: epoch milliseconds on SQLite, text on PostgreSQL.
  const createdAt = sql.placeholder('createdAt') as unknown as Date
  const where = after
    ? sql`(${user.createdAt}, ${user.id}) > (${sql.param(createdAt, user.createdAt)}, ${sql.placeholder('id')})`
    : undefined
  return ctx.db
    .select({
      id: user.id,
      name: user.name,
      email: user.email,
      emailVerified: user.emailVerified,
      createdAt: epochMs(ctx, user.createdAt),
      updatedAt: epochMs(ctx, user.updatedAt),
      username: user.username,
      banned: user.banned,
      banExpires: epochMs(ctx, user.banExpires),
      sources: sourcesColumn(ctx, wanted),
    })
    .from(user)
    .where(where)
    .orderBy(asc(user.createdAt), asc(user.id))
    .limit(limit)
}

/** The user whose LDAP uid is `uid` (the username, else the email of a user without one). */
export async function findUserByUid(ctx: AuthContext, uid: string): Promise<UserRow | undefined> {
  const value = uid.trim().toLowerCase()
  return firstRow(
    ctx.db
      .select()
      .from(user)
      .where(or(eq(user.username, value), and(isNull(user.username), eq(user.email, value))))
      .limit(1),
  )
}

/** Users by email. */
export async function findUsersByMail(ctx: AuthContext, mail: string): Promise<UserRow[]> {
  return ctx.db.select().from(user).where(eq(user.email, mail.trim().toLowerCase()))
}

export async function findUser(ctx: AuthContext, id: string): Promise<UserRow | undefined> {
  return firstRow(ctx.db.select().from(user).where(eq(user.id, id)))
}
