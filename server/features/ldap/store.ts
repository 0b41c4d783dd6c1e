import { and, asc, eq, fillPlaceholders, isNull, or, type SQL, sql } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
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
  if (ctx.storage.dialect === 'postgres') {
    const dialect = new PgDialect()
    return {
      first: dialect.sqlToQuery(postgresChunkQuery(null, limit, wanted)),
      next: dialect.sqlToQuery(postgresChunkQuery('placeholders', limit, wanted)),
    }
  }
  return {
    first: sqliteChunkQuery(ctx, null, limit, wanted).toSQL(),
    next: sqliteChunkQuery(ctx, 'placeholders', limit, wanted).toSQL(),
  }
}

/** The next chunks' select at a position (the createdAt encoded by the column, as a Date would be). */
export function chunkAfter(next: Compiled, after: { createdAt: number; id: string }): Compiled {
  return { sql: next.sql, params: fillPlaceholders(next.params, { createdAt: new Date(after.createdAt), id: after.id }) }
}

/*
 * A person's group sources as one text, equal for people whose sources were read equal, so the
 * index runs the group rule once per distinct text, and the load reads no membership row into
 * JavaScript: the role, then the [organization id, member role] pairs, then the team ids, fields
 * apart by SOURCE_FIELD, parts by SOURCE_PART (control characters: ids are generated and roles are
 * names from the config, neither holds one). Ids, not names: the load maps ids to slugs and names
 * (organization's store: `listOrganizationSlugs`, `listTeamNames`) once per distinct text. A list
 * the rule does not need is read as empty.
 */
const SOURCE_FIELD = '\x1e'
const SOURCE_PART = '\x1f'

/** The parts of a `sources` text: the role, [organization id, member role] pairs, team ids. */
export function parseSources(text: string): { role: string | null; memberships: Array<[string, string]>; teams: string[] } {
  const [role = '', memberships = '', teams = ''] = text.split(SOURCE_FIELD)
  const pairs: Array<[string, string]> = []
  if (memberships !== '') {
    const parts = memberships.split(SOURCE_PART)
    for (let i = 0; i + 1 < parts.length; i += 2) pairs.push([parts[i] as string, parts[i + 1] as string])
  }
  return { role: role === '' ? null : role, memberships: pairs, teams: teams === '' ? [] : teams.split(SOURCE_PART) }
}

/**
 * The select of a load's chunk on SQLite (not run): a keyset chunk in the directory's order, one
 * range of the index `user (createdAt, id)` (migration 0023), no sort; after a position given as
 * placeholders (`chunkAfter` fills them in), or from the start. Each person's sources are two
 * subqueries, each one range of a covering index, member (userId, organizationId, role) or
 * teamMember (userId, teamId) (migration 0024: the row itself is not looked up).
 */
function sqliteChunkQuery(ctx: AuthContext, after: 'placeholders' | null, limit: number, wanted: SourcesWanted) {
  // The position's createdAt goes through the column's encoder when filled in (drizzle's
  // fillPlaceholders), as a Date parameter would: epoch milliseconds. Times are read as stored
  // (epoch milliseconds: an SQL expression, not the column, so drizzle makes no Date of them).
  const createdAt = sql.placeholder('createdAt') as unknown as Date
  const where = after
    ? sql`(${user.createdAt}, ${user.id}) > (${sql.param(createdAt, user.createdAt)}, ${sql.placeholder('id')})`
    : undefined
  const memberships = wanted.memberships
    ? sql`(select group_concat(${member.organizationId} || char(31) || ${member.role}, char(31)) from ${member} where ${member.userId} = ${user.id})`
    : sql`null`
  const teams = wanted.teams
    ? sql`(select group_concat(${teamMember.teamId}, char(31)) from ${teamMember} where ${teamMember.userId} = ${user.id})`
    : sql`null`
  return ctx.db
    .select({
      id: user.id,
      name: user.name,
      email: user.email,
      emailVerified: user.emailVerified,
      createdAt: sql<number>`${user.createdAt}`,
      updatedAt: sql<number>`${user.updatedAt}`,
      username: user.username,
      banned: user.banned,
      banExpires: sql<number>`${user.banExpires}`,
      sources: sql<string>`coalesce(${user.role}, '') || char(30) || coalesce(${memberships}, '') || char(30) || coalesce(${teams}, '')`,
    })
    .from(user)
    .where(where)
    .orderBy(asc(user.createdAt), asc(user.id))
    .limit(limit)
}

/**
 * The select of a load's chunk on PostgreSQL: the chunk's people as on SQLite (one range of the
 * index `user (createdAt, id)`, pg migration 0024), then their memberships and team memberships
 * each in one scan of its covering index (pg 0025) for all the chunk's ids at once
 * (`= any(array(…))`), grouped per person, joined back. Two subqueries per person, as SQLite runs,
 * cost PostgreSQL about 0.25 s more of its CPU per load of 100 000 people (docs/BENCHMARKS.md,
 * round 7 session 12). Times leave as epoch milliseconds, the whole milliseconds a Date would hold.
 */
function postgresChunkQuery(after: 'placeholders' | null, limit: number, wanted: SourcesWanted): SQL {
  const createdAt = sql.placeholder('createdAt') as unknown as Date
  const where = after
    ? sql`where (${user.createdAt}, ${user.id}) > (${sql.param(createdAt, user.createdAt)}, ${sql.placeholder('id')})`
    : sql``
  // date_part answers a float8 (extract a numeric: 2.5 times the database's CPU over three columns
  // of 100 000 rows); rounded to whole microseconds first, so a time on a whole millisecond never
  // reads as the one before it.
  const epochMs = (column: string) => sql.raw(`floor(round(date_part('epoch', chunk."${column}") * 1e6) / 1000)`)
  const memberships = wanted.memberships
    ? sql`(select ${member.userId} as "userId", string_agg(${member.organizationId} || chr(31) || ${member.role}, chr(31)) as list
        from ${member} where ${member.userId} = any(array(select id from chunk)) group by ${member.userId})`
    : sql`(select null::text as "userId", null::text as list where false)`
  const teams = wanted.teams
    ? sql`(select ${teamMember.userId} as "userId", string_agg(${teamMember.teamId}, chr(31)) as list
        from ${teamMember} where ${teamMember.userId} = any(array(select id from chunk)) group by ${teamMember.userId})`
    : sql`(select null::text as "userId", null::text as list where false)`
  return sql`with chunk as materialized (
      select ${user.id} as id, ${user.name} as name, ${user.email} as email, ${user.emailVerified} as "emailVerified",
        ${user.createdAt} as "createdAt", ${user.updatedAt} as "updatedAt", ${user.username} as username,
        ${user.banned} as banned, ${user.banExpires} as "banExpires", ${user.role} as role
      from ${user} ${where} order by ${user.createdAt}, ${user.id} limit ${sql.raw(String(limit))})
    select chunk.id, chunk.name, chunk.email, chunk."emailVerified", ${epochMs('createdAt')}, ${epochMs('updatedAt')},
      chunk.username, chunk.banned, ${epochMs('banExpires')},
      coalesce(chunk.role, '') || chr(30) || coalesce(memberships.list, '') || chr(30) || coalesce(teams.list, '')
    from chunk
      left join ${memberships} memberships on memberships."userId" = chunk.id
      left join ${teams} teams on teams."userId" = chunk.id
    order by chunk."createdAt", chunk.id`
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
