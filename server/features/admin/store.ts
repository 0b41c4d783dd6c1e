import { and, asc, count, desc, eq, gt, gte, inArray, lt, lte, ne, notInArray, or, type SQL, sql } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import type { DB } from '../../db/index.js'
import { user } from '../../db/schema.js'
import { type ChangeSignal, firstRow, type TransactionOptions } from '../../db/storage.js'

/**
 * Every query of the admin feature (the storage port's rules: awaited, joinable from
 * ctx.storage.transaction). SQLite-only accelerations (row ids, the trigram index, index hints)
 * sit behind `ctx.storage.dialect === 'sqlite'` with a portable form beside them.
 */

const isSqlite = (ctx: AuthContext): boolean => ctx.storage.dialect === 'sqlite'

// ---------------------------------------------------------------------------------------------
// users and sessions

/** Writes a patch to one user (updatedAt from the clock); undefined when there is no such user. */
export async function updateUserRow(ctx: AuthContext, userId: string, patch: Partial<UserRow>): Promise<UserRow | undefined> {
  return firstRow(
    ctx.db
      .update(user)
      .set({ ...patch, updatedAt: new Date(ctx.clock.now()) })
      .where(eq(user.id, userId))
      .returning(),
  )
}

// ---------------------------------------------------------------------------------------------
// list-users

export type ColumnKind = 'text' | 'boolean' | 'date' | 'number'
export type TextOperator = 'contains' | 'starts_with' | 'ends_with'
export type FilterOperator = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'in' | 'not_in' | TextOperator
export type FilterValue = string | number | boolean | Array<string | number>

/** A query that cannot be answered (unknown column, impossible value): list-users then answers no users. */
export class UnanswerableQuery extends Error {}

type Listable = Record<string, { column: SQLiteColumn; kind: ColumnKind; indexed: boolean }>
let listableFor: { table: typeof user; columns: Listable } | undefined

/**
 * The user columns list-users may filter and sort on (anything else fails the query). Built on
 * use, not at import: on PostgreSQL the table exports are rebound to the pg-core mirror after this
 * module loads, and a column of the SQLite table would bind its values the SQLite way.
 */
function listable(): Listable {
  if (listableFor?.table !== user) {
    listableFor = {
      table: user,
      columns: {
        id: { column: user.id, kind: 'text', indexed: true },
        name: { column: user.name, kind: 'text', indexed: true },
        email: { column: user.email, kind: 'text', indexed: true },
        emailVerified: { column: user.emailVerified, kind: 'boolean', indexed: false },
        image: { column: user.image, kind: 'text', indexed: false },
        createdAt: { column: user.createdAt, kind: 'date', indexed: true },
        updatedAt: { column: user.updatedAt, kind: 'date', indexed: false },
        username: { column: user.username, kind: 'text', indexed: true },
        displayUsername: { column: user.displayUsername, kind: 'text', indexed: false },
        role: { column: user.role, kind: 'text', indexed: false },
        banned: { column: user.banned, kind: 'boolean', indexed: false },
        banReason: { column: user.banReason, kind: 'text', indexed: false },
        banExpires: { column: user.banExpires, kind: 'date', indexed: false },
      },
    }
  }
  return listableFor.columns
}

export interface UserQuery {
  search?: { field: 'email' | 'name'; operator: TextOperator; value: string }
  filter?: { field: string; operator: FilterOperator; value: FilterValue }
  sortBy: string | null
  direction: 'asc' | 'desc'
  limit: number
  offset: number
}

/**
 * A search goes through the trigram index when its rarest trigram occurs in at most this many
 * rows: a fiftieth of the table, between 500 and 2 000 (measured at 100 000 users: phrase
 * matching costs about as much as a covering-index LIKE scan once a few thousand rows match).
 * Above that the plain scan, which also fills a page early, is cheaper.
 */
const trigramCandidateLimit = (rows: number): number => Math.max(500, Math.min(2_000, Math.floor(rows / 50)))

const escapeLike = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * Case-insensitive substring match. SQLite's LIKE is case-insensitive (ASCII). On PostgreSQL
 * `lower(col) LIKE lower(pattern)` rather than ILIKE: the GIN trigram indexes (0001_init) and the
 * text_pattern_ops prefix indexes (0004_list_users_counts) are built on lower(col), so only this
 * form can use them.
 */
function likeCondition(ctx: AuthContext, column: SQLiteColumn | SQL, operator: TextOperator, value: string): SQL {
  const v = escapeLike(value)
  const pattern = operator === 'starts_with' ? `${v}%` : operator === 'ends_with' ? `%${v}` : `%${v}%`
  return isSqlite(ctx) ? sql`${column} LIKE ${pattern} ESCAPE '\\'` : sql`lower(${column}) LIKE lower(${pattern}) ESCAPE '\\'`
}

function coerce(kind: ColumnKind, value: string | number | boolean): string | number | boolean | Date {
  if (kind === 'boolean') {
    if (value === true || value === 'true' || value === 1 || value === '1') return true
    if (value === false || value === 'false' || value === 0 || value === '0') return false
    throw new UnanswerableQuery('not a boolean')
  }
  if (kind === 'date') {
    const ms = typeof value === 'number' ? value : /^\d+$/.test(String(value)) ? Number(value) : Date.parse(String(value))
    if (typeof value === 'boolean' || Number.isNaN(ms)) throw new UnanswerableQuery('not a date')
    return new Date(ms)
  }
  if (kind === 'number') {
    const n = typeof value === 'boolean' || value === '' ? Number.NaN : Number(value)
    if (!Number.isFinite(n)) throw new UnanswerableQuery('not a number')
    return n
  }
  return String(value)
}

/**
 * A configured additional user field (user.additionalFields) as a filter target: its value read
 * from the JSON column. Dates are stored as ISO strings, so they compare as ISO strings.
 */
function additionalFieldTarget(ctx: AuthContext, name: string): { column: SQL; kind: ColumnKind; json: true } | undefined {
  const fields = ctx.config().user.additionalFields
  const def = Object.hasOwn(fields, name) ? fields[name] : undefined
  if (!def) return undefined
  const kind: ColumnKind = def.type === 'string' ? 'text' : def.type
  if (isSqlite(ctx)) {
    const path = `$."${name.replace(/"/g, '')}"`
    return { column: sql`json_extract(${user.additionalFields}, ${path})`, kind, json: true }
  }
  // PostgreSQL: `->>` yields text, which would compare numbers and booleans as strings ('10' < '5');
  // numbers and booleans are cast when the JSON holds that type (else NULL, which matches no
  // comparison, as a value of another type does on SQLite). ISO dates compare byte-wise, as on SQLite.
  const value = sql`(${user.additionalFields}::jsonb -> ${name})`
  const text = sql`(${user.additionalFields}::jsonb ->> ${name})`
  if (kind === 'number') return { column: sql`(CASE WHEN jsonb_typeof(${value}) = 'number' THEN ${text}::numeric END)`, kind, json: true }
  if (kind === 'boolean') return { column: sql`(CASE WHEN jsonb_typeof(${value}) = 'boolean' THEN ${text}::boolean END)`, kind, json: true }
  if (kind === 'date') return { column: sql`(${text} COLLATE "C")`, kind, json: true }
  return { column: text, kind, json: true }
}

function filterCondition(ctx: AuthContext, fieldName: string, operator: FilterOperator, raw: FilterValue): SQL {
  const field: { column: SQLiteColumn | SQL; kind: ColumnKind; json?: true } | undefined = Object.hasOwn(listable(), fieldName)
    ? listable()[fieldName]
    : additionalFieldTarget(ctx, fieldName)
  if (!field) throw new UnanswerableQuery(`unknown field ${fieldName}`)
  // Typed as SQL for drizzle's operator overloads; a real column still binds through its own mapping.
  const column = field.column as SQL
  const { kind } = field
  // A JSON value is compared as JSON holds it: dates as their ISO strings.
  const bind = (v: string | number | boolean | Date) => (field.json && v instanceof Date ? v.toISOString() : v)
  if (operator === 'contains' || operator === 'starts_with' || operator === 'ends_with') {
    if (kind !== 'text' || Array.isArray(raw)) throw new UnanswerableQuery('text operator on a non-text value')
    return likeCondition(ctx, column, operator, String(raw))
  }
  if (operator === 'in' || operator === 'not_in') {
    const list = (Array.isArray(raw) ? raw : String(raw).split(',')).map((v) => bind(coerce(kind, v)))
    if (list.length === 0) throw new UnanswerableQuery('empty list')
    return operator === 'in' ? inArray(column, list) : notInArray(column, list)
  }
  if (Array.isArray(raw)) throw new UnanswerableQuery('list value for a scalar operator')
  const value = bind(coerce(kind, raw))
  if (kind === 'boolean') {
    // Rows written before the column existed hold NULL, which means false.
    const flag = isSqlite(ctx) ? sql`coalesce(${column}, 0)` : sql`coalesce(${column}, false)`
    const bit = isSqlite(ctx) ? (value ? 1 : 0) : value === true
    if (operator === 'eq') return sql`${flag} = ${bit}`
    if (operator === 'ne') return sql`${flag} <> ${bit}`
  }
  switch (operator) {
    case 'eq':
      return eq(column, value)
    case 'ne':
      return ne(column, value)
    case 'lt':
      return lt(column, value)
    case 'lte':
      return lte(column, value)
    case 'gt':
      return gt(column, value)
    case 'gte':
      return gte(column, value)
  }
}

/**
 * About how many users there are, cheaply: on SQLite max(rowid) in O(log n) (deletions only
 * make it larger); elsewhere a count.
 */
export async function estimateUserCount(ctx: AuthContext): Promise<number> {
  const n = isSqlite(ctx) ? sql<number>`coalesce(max(${user}.rowid), 0)` : sql<number>`count(*)`
  return Number((await firstRow(ctx.db.select({ n }).from(user)))?.n ?? 0)
}

/** Trigrams of a search term, as the FTS5 trigram tokenizer (case-insensitive) stores them. */
function trigrams(term: string): string[] {
  const chars = [...term.toLowerCase()]
  const out = new Set<string>()
  for (let i = 0; i + 3 <= chars.length; i++) out.add(chars.slice(i, i + 3).join(''))
  return [...out]
}

/**
 * Narrows a substring search through SQLite's trigram index (migration 0001_user_search) when it
 * pays: the term has at least 3 characters and its rarest trigram occurs in few rows. Returns the
 * candidate condition, or null to let the plain LIKE scan (cheap for common terms) do it. The LIKE
 * condition is always applied as well, so the index only ever removes rows that cannot match.
 */
async function trigramCandidates(ctx: AuthContext, field: 'email' | 'name', term: string): Promise<SQL | null> {
  if (!isSqlite(ctx)) return null
  const grams = trigrams(term)
  if (grams.length === 0) return null
  const counts = await trigramDocCounts(ctx, field, grams)
  // A trigram absent from the index: nothing can match.
  if (counts.some((n) => n === 0)) return sql`0`
  if (Math.min(...counts) > trigramCandidateLimit(await estimateUserCount(ctx))) return null
  const phrase = `${field} : "${term.replace(/"/g, '""')}"`
  return sql`${user.id} IN (SELECT userId FROM user_search WHERE user_search MATCH ${phrase})`
}

/**
 * How many rows hold each trigram (fts5vocab), remembered for a while: fts5vocab counts a term's
 * documents by reading its whole doclist, about 90 ms for the common trigrams of 1 M addresses
 * ("exa", "mpl"), paid on every search otherwise. A remembered count only steers the choice
 * between the index and the scan (the LIKE re-check keeps results exact whatever it says), so it
 * may be a little old; an absent trigram (0, "nothing can match") is never remembered.
 */
const TRIGRAM_COUNT_TTL_MS = 5 * 60_000
const trigramCounts = new WeakMap<DB, Map<string, { n: number; at: number }>>()

async function trigramDocCounts(ctx: AuthContext, field: 'email' | 'name', grams: string[]): Promise<number[]> {
  let known = trigramCounts.get(ctx.db)
  if (!known) {
    known = new Map()
    trigramCounts.set(ctx.db, known)
  }
  const now = ctx.clock.now()
  const fresh = (gram: string) => {
    const hit = known.get(`${field}:${gram}`)
    return hit && now - hit.at < TRIGRAM_COUNT_TTL_MS ? hit.n : undefined
  }
  const missing = grams.filter((g) => fresh(g) === undefined)
  if (missing.length > 0) {
    const rows = await ctx.db
      .select({ term: sql<string>`term`, n: sql<number>`doc` })
      .from(sql`user_search_vocab`)
      .where(
        sql`col = ${field} AND term IN (${sql.join(
          missing.map((g) => sql`${g}`),
          sql`, `,
        )})`,
      )
    if (known.size > 50_000) known.clear()
    for (const row of rows) if (Number(row.n) > 0) known.set(`${field}:${row.term}`, { n: Number(row.n), at: now })
    const found = new Map(rows.map((r) => [r.term, Number(r.n)]))
    return grams.map((g) => fresh(g) ?? found.get(g) ?? 0)
  }
  return grams.map((g) => fresh(g) ?? 0)
}

// ---------------------------------------------------------------------------------------------
// the exact total (docs/proposals/list-users-total.md)

/**
 * Exact totals of queries that no index answers (a common substring, a filter the maintained
 * counts do not cover), kept while the database has not changed at all: the storage's change
 * signal with this process's own writes counted (SQLite: total_changes() and data_version;
 * PostgreSQL: the LISTEN/NOTIFY version, made current by `sync()` first). Any write anywhere
 * empties it, so an entry can never be stale; a repeated query or the next page of a search then
 * costs no count. A count that ran while the database changed is not stored (the epoch moved).
 */
export class ExactTotalCache {
  private readonly entries = new Map<string, number>()
  private epoch = 0

  constructor(
    private readonly signal: ChangeSignal,
    private readonly maxEntries = 256,
  ) {}

  private check(): void {
    if (this.signal.changed()) {
      this.entries.clear()
      this.epoch++
    }
  }

  /** Makes the signal current (PostgreSQL) and answers the epoch a count started in. */
  async begin(): Promise<number> {
    if (this.signal.sync) await this.signal.sync()
    this.check()
    return this.epoch
  }

  get(key: string): number | undefined {
    this.check()
    const total = this.entries.get(key)
    if (total !== undefined) {
      // Least recently used goes first: re-insert at the end.
      this.entries.delete(key)
      this.entries.set(key, total)
    }
    return total
  }

  /** Stores a total counted since `begin()` answered `epoch`, unless the database changed meanwhile. */
  set(key: string, total: number, epoch: number): void {
    this.check()
    if (epoch !== this.epoch) return
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next()
      if (!oldest.done) this.entries.delete(oldest.value)
    }
    this.entries.set(key, total)
  }
}

const totalCaches = new WeakMap<DB, ExactTotalCache>()

function totalCache(ctx: AuthContext): ExactTotalCache {
  let cache = totalCaches.get(ctx.db)
  if (!cache) {
    cache = new ExactTotalCache(ctx.storage.changeSignal({ ownWrites: true }))
    totalCaches.set(ctx.db, cache)
  }
  return cache
}

/**
 * How a total was found (tests check each path against a plain count): `term` a remembered term
 * total (kept exact by triggers), `trigram` counted through SQLite's trigram index, `counted` a
 * plain count (for a search alone, then remembered as a term).
 */
export type TotalPath = 'maintained' | 'prefix' | 'term' | 'trigram' | 'cached' | 'counted'

const userCountTable = sql`"userCount"`

/**
 * The condition on the maintained `userCount` rows (migration list_users_counts: users per exact
 * role string, '' for NULL, and ban state, NULL as not banned) that sums to the total of a query
 * without a search, or undefined when the filter is not one they answer: none (everyone),
 * `role eq|in` non-empty strings (`ne` would need NULL roles apart from ''), `banned eq|ne`.
 */
function maintainedCondition(ctx: AuthContext, filter: UserQuery['filter']): SQL | undefined {
  if (!filter) return sql`1 = 1`
  const { field, operator, value } = filter
  if (field === 'role' && (operator === 'eq' || operator === 'in')) {
    const list =
      operator === 'in'
        ? (Array.isArray(value) ? value : String(value).split(',')).map(String)
        : Array.isArray(value)
          ? []
          : [String(value)]
    if (list.length === 0 || list.some((role) => role === '')) return undefined
    return sql`"role" IN (${sql.join(
      list.map((role) => sql`${role}`),
      sql`, `,
    )})`
  }
  if (field === 'banned' && (operator === 'eq' || operator === 'ne') && !Array.isArray(value)) {
    const flag = coerce('boolean', value) === (operator === 'eq')
    return isSqlite(ctx) ? sql`"banned" = ${flag ? 1 : 0}` : sql`"banned" = ${flag}`
  }
  return undefined
}

/** A non-empty printable-ASCII prefix: lower() folds it exactly as LIKE does, on both engines. */
const asciiPrefix = (value: string): boolean => /^[\x20-\x7e]+$/.test(value)

/** Every ASCII case variant of a string ("li" → li, lI, Li, LI). */
function caseVariants(value: string): string[] {
  let out = ['']
  for (const c of value) {
    const lowerC = c.toLowerCase()
    const upperC = c.toUpperCase()
    out = lowerC === upperC ? out.map((v) => v + c) : out.flatMap((v) => [v + lowerC, v + upperC])
  }
  return out
}

/**
 * SQLite: the first `k` rows (row id and key, in the order key, rowid) whose indexed text column
 * starts with an ASCII case variant of `prefix`'s first six characters and meets `condition`:
 * each variant is one range of the column's BINARY index (read index-only, at most `k` entries
 * each, at most 64 variants), merged in the query's order.
 */
async function variantRangeKeys(
  ctx: AuthContext,
  column: SQLiteColumn,
  prefix: string,
  condition: SQL | undefined,
  k: number,
  desc: boolean,
): Promise<Array<{ r: number; k: string }>> {
  const rowid = sql`${user}.rowid`
  const dir = sql.raw(desc ? 'DESC' : 'ASC')
  const branches = caseVariants(prefix.slice(0, 6)).map(
    (low) =>
      sql`SELECT * FROM (SELECT ${rowid} AS r, ${column} AS k FROM ${user} WHERE ${column} >= ${low} AND ${column} < ${successor(low)} AND ${condition ?? sql`1`} ORDER BY ${column} ${dir}, ${rowid} ${dir} LIMIT ${k})`,
  )
  return ctx.db.all<{ r: number; k: string }>(
    sql`SELECT r, k FROM (${sql.join(branches, sql` UNION ALL `)}) ORDER BY k ${dir}, r ${dir} LIMIT ${k}`,
  )
}

/** The least string above every string that starts with `value` (printable ASCII, BINARY order). */
const successor = (value: string): string => value.slice(0, -1) + String.fromCharCode(value.charCodeAt(value.length - 1) + 1)

/**
 * `col LIKE 'prefix%'` counted from the lower(col) index alone: on SQLite a range
 * [lower(prefix), successor) on the expression index (exact for an ASCII prefix: SQLite's lower()
 * and LIKE fold ASCII only, and the range holds exactly the strings starting with it); on
 * PostgreSQL `lower(col) LIKE lower(prefix)%`, which the text_pattern_ops index with INCLUDE (col)
 * answers with an index-only scan.
 */
async function prefixCount(ctx: AuthContext, field: 'email' | 'name', prefix: string): Promise<number> {
  const column = field === 'name' ? user.name : user.email
  let where: SQL
  if (isSqlite(ctx)) {
    const low = prefix.toLowerCase()
    const high = low.slice(0, -1) + String.fromCharCode(low.charCodeAt(low.length - 1) + 1)
    where = sql`lower(${column}) >= ${low} AND lower(${column}) < ${high}`
  } else {
    where = sql`lower(${column}) LIKE ${`${escapeLike(prefix.toLowerCase())}%`} ESCAPE '\\'`
  }
  return Number((await firstRow(ctx.db.select({ n: count() }).from(user).where(where)))?.n ?? 0)
}

// ---------------------------------------------------------------------------------------------
// remembered term totals (migrations list_users_terms)

/** At most this many search terms are remembered; the least recently used is forgotten first. */
export const MAX_REMEMBERED_TERMS = 256
/** A remembered term's `usedAt` is rewritten at most this often (a read should rarely write). */
const TERM_TOUCH_MS = 10 * 60_000
const termTable = sql`"userTermCount"`

/** A statement run for its effect: drizzle spells it `run` on SQLite and `execute` on PostgreSQL (whose handle this type does not describe). */
async function runStatement(ctx: AuthContext, statement: SQL): Promise<void> {
  if (isSqlite(ctx)) await ctx.db.run(statement)
  else await (ctx.db as unknown as { execute(query: SQL): Promise<unknown> }).execute(statement)
}

/**
 * The LIKE pattern of a search as the term rows hold it: the query's own pattern, with ASCII
 * letters lower-cased on SQLite (its LIKE folds ASCII only, so the meaning is the same and 'Liam'
 * and 'liam' share a row); on PostgreSQL the store applies SQL lower() to it, as the query does.
 */
function termPattern(ctx: AuthContext, search: NonNullable<UserQuery['search']>): string {
  const v = escapeLike(search.value)
  const pattern = search.operator === 'starts_with' ? `${v}%` : search.operator === 'ends_with' ? `%${v}` : `%${v}%`
  return isSqlite(ctx) ? pattern.replace(/[A-Z]/g, (c) => c.toLowerCase()) : pattern
}

/**
 * A remembered term's exact total, or undefined when the term is not remembered. SQLite: one row.
 * PostgreSQL: the term's row (shard 0, its count when added) plus the changes since (shards 1-16),
 * summed in one statement, so from one snapshot.
 */
async function rememberedTotal(ctx: AuthContext, search: NonNullable<UserQuery['search']>): Promise<number | undefined> {
  const pattern = termPattern(ctx, search)
  const now = ctx.clock.now()
  if (isSqlite(ctx)) {
    const row = await firstRow(
      ctx.db
        .select({ n: sql<number>`"n"`, usedAt: sql<number>`"usedAt"` })
        .from(termTable)
        .where(sql`"field" = ${search.field} AND "pattern" = ${pattern}`),
    )
    if (!row) return undefined
    if (now - Number(row.usedAt) > TERM_TOUCH_MS) {
      await runStatement(ctx, sql`UPDATE "userTermCount" SET "usedAt" = ${now} WHERE "field" = ${search.field} AND "pattern" = ${pattern}`)
    }
    return Number(row.n)
  }
  const row = await firstRow(
    ctx.db
      .select({
        n: sql<string | number | null>`sum("n")`,
        usedAt: sql<string | number | null>`max("usedAt") FILTER (WHERE "shard" = 0)`,
        known: sql<boolean | null>`bool_or("shard" = 0)`,
      })
      .from(termTable)
      .where(sql`"field" = ${search.field} AND "pattern" = lower(${pattern})`),
  )
  if (!row?.known) return undefined
  if (now - Number(row.usedAt ?? 0) > TERM_TOUCH_MS) {
    await runStatement(
      ctx,
      sql`UPDATE "userTermCount" SET "usedAt" = ${now} WHERE "field" = ${search.field} AND "pattern" = lower(${pattern}) AND "shard" = 0`,
    )
  }
  return Number(row.n ?? 0)
}

/** The isolation of countAndRemember's transaction (see there). */
const countIsolation: TransactionOptions = { isolation: 'read committed' }

/**
 * Counts a search's matches and remembers the term, in one transaction that no write to "user" can
 * fall into: on SQLite the transaction holds the write lock (BEGIN IMMEDIATE) from before the
 * count to the commit; on PostgreSQL it first locks "user" in SHARE mode (waiting for the writes
 * in flight; new writes wait for it) and bumps the epoch row (see migration 0006_list_users_terms
 * for why). From the commit on, the triggers keep the total exact. The least recently used terms
 * beyond MAX_REMEMBERED_TERMS are forgotten in the same transaction.
 * PostgreSQL runs it at READ COMMITTED: the SHARE lock already keeps every writer of "user" out
 * of the count (which takes its snapshot after the lock), and two instances adding one term count
 * the same rows; serializable's predicate locks on the scanned index made a first count of a name
 * at 1 M users about 20 ms (a third) slower.
 */
async function countAndRemember(
  ctx: AuthContext,
  search: NonNullable<UserQuery['search']>,
  countMatches: () => Promise<number>,
): Promise<number> {
  const pattern = termPattern(ctx, search)
  const now = ctx.clock.now()
  const field = search.field
  return ctx.storage.transaction(async () => {
    if (isSqlite(ctx)) {
      await runStatement(
        ctx,
        sql`DELETE FROM "userTermCount" WHERE ("field", "pattern") IN (SELECT "field", "pattern" FROM "userTermCount" ORDER BY "usedAt" LIMIT max(0, (SELECT count(*) FROM "userTermCount") - ${MAX_REMEMBERED_TERMS - 1}))`,
      )
      const total = await countMatches()
      await runStatement(
        ctx,
        sql`INSERT INTO "userTermCount" ("field", "pattern", "n", "usedAt") VALUES (${field}, ${pattern}, ${total}, ${now}) ON CONFLICT DO NOTHING`,
      )
      return total
    }
    await runStatement(ctx, sql`LOCK TABLE "user" IN SHARE MODE`)
    await runStatement(ctx, sql`UPDATE "userTermCount" SET "n" = "n" + 1 WHERE "field" = '' AND "pattern" = '' AND "shard" = 0`)
    await runStatement(
      ctx,
      sql`DELETE FROM "userTermCount" WHERE ("field", "pattern") IN (SELECT "field", "pattern" FROM "userTermCount" WHERE "shard" = 0 AND "field" <> '' ORDER BY "usedAt" LIMIT greatest(0, (SELECT count(*) FROM "userTermCount" WHERE "shard" = 0 AND "field" <> '') - ${MAX_REMEMBERED_TERMS - 1}))`,
    )
    const total = await countMatches()
    // Another instance may have added the term meanwhile (its count then equals this one: both
    // were taken with every write to "user" held off); its row is kept.
    await runStatement(
      ctx,
      sql`INSERT INTO "userTermCount" ("field", "pattern", "shard", "n", "usedAt") VALUES (${field}, lower(${pattern}), 0, ${total}, ${now}) ON CONFLICT DO NOTHING`,
    )
    return total
  }, countIsolation)
}

/**
 * Tuning of list-users (tests change it to send small populations down the paths of large ones).
 * `trigramCountLimit`: above this many phrase candidates a trigram count (about 2 µs a candidate
 * at 1 M users) is dearer than a scan. `trigramRememberFrom`: a search with more candidates than
 * this is remembered once counted (a write), fewer are counted again each time. `sparseWalkRows`: (SQLite) a page walk expected to read
 * more rows than this takes a search's matches from the trigram index instead.
 */
export const listUsersTuning = { trigramCountLimit: 40_000, trigramRememberFrom: 5_000, sparseWalkRows: 50_000 }
/** Counting a term's phrase candidates reads the doclists of its trigrams: skip it when one is this common. */
const TRIGRAM_PHRASE_LIMIT = 200_000

/**
 * SQLite: how to count a search alone through the trigram index, when its candidates are few
 * enough: the candidates are the FTS rows holding the term as a phrase of trigrams (case folded
 * the Unicode way, so never fewer than LIKE's matches), re-checked with the query's own LIKE on
 * the index's copy of the column (kept by the triggers of 0001_user_search). Undefined when it
 * would cost more than the scan (a term under 3 characters, a common term).
 */
async function trigramPlan(
  ctx: AuthContext,
  search: NonNullable<UserQuery['search']>,
): Promise<{ candidates: number; count: () => Promise<number> } | undefined> {
  if (!isSqlite(ctx)) return undefined
  const grams = trigrams(search.value)
  if (grams.length === 0) return undefined
  const counts = await trigramDocCounts(ctx, search.field, grams)
  // A trigram absent from the index (never remembered, so current): nothing can match.
  if (counts.some((n) => n === 0)) return { candidates: 0, count: async () => 0 }
  if (Math.min(...counts) > TRIGRAM_PHRASE_LIMIT) return undefined
  const phrase = `${search.field} : "${search.value.replace(/"/g, '""')}"`
  const candidates = Number(
    (await firstRow(ctx.db.select({ n: count() }).from(sql`user_search`).where(sql`user_search MATCH ${phrase}`)))?.n ?? 0,
  )
  if (candidates > listUsersTuning.trigramCountLimit) return undefined
  const column = sql.raw(search.field === 'name' ? 'name' : 'email')
  const recheck = likeCondition(ctx, column, search.operator, search.value)
  return {
    candidates,
    count: async () =>
      candidates === 0
        ? 0
        : Number(
            (await firstRow(ctx.db.select({ n: count() }).from(sql`user_search`).where(sql`user_search MATCH ${phrase} AND ${recheck}`)))
              ?.n ?? 0,
          ),
  }
}

/**
 * The exact total of a query without a page, by the cheapest exact means: the maintained counts
 * (everyone, a role, a ban state), the lower(col) index (an ASCII starts_with search alone), for a
 * search alone a remembered term total, then (SQLite) the trigram index when the term's candidates
 * are few, else a count that remembers the term; anything else `count(*)` with the query's own
 * conditions through the exact-total cache.
 */
export async function exactTotal(
  ctx: AuthContext,
  query: Pick<UserQuery, 'search' | 'filter'>,
  where: SQL | undefined,
): Promise<{ total: number; path: TotalPath }> {
  const { search, filter } = query
  if (!search) {
    const condition = maintainedCondition(ctx, filter)
    if (condition) {
      const row = await firstRow(ctx.db.select({ n: sql<number | string>`coalesce(sum("n"), 0)` }).from(userCountTable).where(condition))
      return { total: Number(row?.n ?? 0), path: 'maintained' }
    }
  } else if (!filter) {
    if (search.operator === 'starts_with' && asciiPrefix(search.value)) {
      return { total: await prefixCount(ctx, search.field, search.value), path: 'prefix' }
    }
    const remembered = await rememberedTotal(ctx, search)
    if (remembered !== undefined) return { total: remembered, path: 'term' }
    // Few candidates: counted through the trigram index each time (no write). More: counted once
    // (through the trigram index, or by a scan when they are too many) and remembered.
    const viaIndex = await trigramPlan(ctx, search)
    if (viaIndex && viaIndex.candidates <= listUsersTuning.trigramRememberFrom) return { total: await viaIndex.count(), path: 'trigram' }
    const scan = async () => Number((await firstRow(ctx.db.select({ n: count() }).from(user).where(where)))?.n ?? 0)
    return { total: await countAndRemember(ctx, search, viaIndex?.count ?? scan), path: 'counted' }
  }
  const cache = totalCache(ctx)
  // The filter's meaning depends on the configured additional field it may name.
  const fields = ctx.config().user.additionalFields
  const definition = filter && !Object.hasOwn(listable(), filter.field) && Object.hasOwn(fields, filter.field) ? fields[filter.field] : null
  const key = JSON.stringify([search ?? null, filter ?? null, definition ?? null])
  const epoch = await cache.begin()
  const hit = cache.get(key)
  if (hit !== undefined) return { total: hit, path: 'cached' }
  const total = Number((await firstRow(ctx.db.select({ n: count() }).from(user).where(where)))?.n ?? 0)
  cache.set(key, total, epoch)
  return { total, path: 'counted' }
}

/** Builds the WHERE of a query (search ANDed with filter) and whether the trigram index narrowed it. */
async function conditionsOf(
  ctx: AuthContext,
  query: Pick<UserQuery, 'search' | 'filter'>,
): Promise<{ where: SQL | undefined; narrowed: boolean }> {
  const conditions: SQL[] = []
  let narrowed = false
  if (query.search) {
    const { field, operator, value } = query.search
    const candidates = await trigramCandidates(ctx, field, value)
    if (candidates) {
      conditions.push(candidates)
      narrowed = true
    }
    conditions.push(likeCondition(ctx, field === 'name' ? user.name : user.email, operator, value))
  }
  if (query.filter) conditions.push(filterCondition(ctx, query.filter.field, query.filter.operator, query.filter.value))
  return { where: conditions.length > 0 ? and(...conditions) : undefined, narrowed }
}

/** The total of a query alone, with the path that found it (for the exactness tests and benches). */
export async function countUsers(
  ctx: AuthContext,
  query: Pick<UserQuery, 'search' | 'filter'>,
): Promise<{ total: number; path: TotalPath }> {
  const { where } = await conditionsOf(ctx, query)
  return exactTotal(ctx, query, where)
}

/**
 * One page of users and the total matching: search and filter ANDed, total counted with the same
 * conditions, sorted on a listed column with ties broken by insertion order. Throws
 * UnanswerableQuery for a query naming an unknown column or an impossible value.
 */
export async function queryUsers(ctx: AuthContext, query: UserQuery): Promise<{ users: UserRow[]; total: number }> {
  const { limit, offset } = query
  const sqlite = isSqlite(ctx)
  const { where, narrowed } = await conditionsOf(ctx, query)
  const countAll = async () => (await exactTotal(ctx, query, where)).total

  const sortInfo = query.sortBy === null ? null : Object.hasOwn(listable(), query.sortBy) ? listable()[query.sortBy] : undefined
  if (sortInfo === undefined) throw new UnanswerableQuery(`unknown sort field ${query.sortBy}`)
  // `reversed`: the opposite of the query's order (a page read from the far end, then put back).
  const directionOf = (reversed: boolean) => ((query.direction === 'desc') !== reversed ? desc : asc)
  const direction = directionOf(false)
  // Insertion order: SQLite's rowid; elsewhere creation time, then id.
  const rowid = sql`${user}.rowid`
  const insertion = (reversed = false): SQL[] => {
    const by = directionOf(reversed)
    return sqlite ? [by(rowid)] : [by(user.createdAt), by(user.id)]
  }
  const order = (useIndex: boolean, reversed = false): SQL[] => {
    if (!sortInfo) return insertion(reversed)
    // "+column" keeps SQLite from walking the column's index when sorting the few matches is cheaper.
    const key = useIndex || !sqlite ? sortInfo.column : sql`+${sortInfo.column}`
    return [directionOf(reversed)(key), ...insertion(reversed)]
  }
  if (narrowed) {
    // (SQLite only.) Few candidates: one pass sorts their row ids and counts them; then the page's rows.
    const page = await ctx.db
      .select({ r: rowid, total: sql<number>`count(*) OVER ()` })
      .from(user)
      .where(where)
      .orderBy(...order(false))
      .limit(limit)
      .offset(offset)
    if (page.length === 0) return { users: [], total: await countAll() }
    const rows = await ctx.db
      .select({ u: user, r: rowid })
      .from(user)
      .where(
        inArray(
          rowid,
          page.map((p) => p.r),
        ),
      )
    const byRowid = new Map(rows.map((x) => [x.r, x.u]))
    const users = page.map((p) => byRowid.get(p.r)).filter((u): u is UserRow => u !== undefined)
    return { users, total: Number(page[0]?.total ?? 0) }
  }
  const total = await countAll()
  if (total === 0 || offset >= total) return { users: [], total }
  const search = query.search
  const searched = search?.field === 'name' ? user.name : user.email
  if (sqlite && search && !query.filter && trigrams(search.value).length > 0) {
    // SQLite, a search alone whose matches are sparse (the exact total is known by now): a walk in
    // page order would read about (offset + limit) × rows / total rows before the page is full,
    // the whole table when a term matches a few hundred users. Past `sparseWalkRows`, the matches
    // come from the trigram index instead (its phrase candidates are the matches, plus only rows
    // whose Unicode case folding differs from LIKE's, which the LIKE removes), few by then
    // (under ~2 000 for a first page at 1 M users), sorted without walking an index.
    const walked = ((offset + limit) * (await estimateUserCount(ctx))) / total
    if (walked > listUsersTuning.sparseWalkRows) {
      const phrase = `${search.field} : "${search.value.replace(/"/g, '""')}"`
      const sortKey = sortInfo ? [direction(sql`+${sortInfo.column}`)] : []
      const users = await ctx.db
        .select()
        .from(user)
        .where(and(sql`${user.id} IN (SELECT userId FROM user_search WHERE user_search MATCH ${phrase})`, where))
        .orderBy(...sortKey, direction(sql`+${rowid}`))
        .limit(limit)
        .offset(offset)
      return { users, total }
    }
  }
  if (
    sqlite &&
    search &&
    !query.filter &&
    search.operator === 'starts_with' &&
    asciiPrefix(search.value) &&
    sortInfo?.column === searched &&
    sortInfo.indexed
  ) {
    // SQLite, a prefix sorted by the searched column ("email starts with li, sortBy email"): LIKE
    // folds case, so it cannot seek the column's BINARY index, and a walk of that index reads every
    // key before the prefix. But the keys starting with a case variant of an ASCII prefix ("li",
    // "lI", "Li", "LI") are each one range of that index: the first `offset + limit` of each range
    // (index-only), merged in the query's order, hold the page. Variants of the first six
    // characters at most (64 ranges); LIKE re-checks the rest of a longer prefix in each range.
    const keys = await variantRangeKeys(ctx, searched, search.value, where, offset + limit, query.direction === 'desc')
    const page = keys.slice(offset, offset + limit)
    if (page.length === 0) return { users: [], total }
    const users = await ctx.db
      .select()
      .from(user)
      .where(
        inArray(
          rowid,
          page.map((x) => x.r),
        ),
      )
      .orderBy(...order(true))
    return { users, total }
  }
  if (sqlite && !where && (!sortInfo || sortInfo.indexed)) {
    // A page of everyone: walk only the (covering) index to the page, then fetch its rows.
    const keys = ctx.db
      .select({ r: rowid })
      .from(user)
      .orderBy(...order(true))
      .limit(limit)
      .offset(offset)
    const users = await ctx.db
      .select()
      .from(user)
      .where(inArray(rowid, keys))
      .orderBy(...order(true))
    return { users, total }
  }
  // PostgreSQL: the ids of the page from a walk of the sort index that needs no row (the
  // (column, createdAt, id) indexes of migration list_users_counts), then only those rows; an
  // OFFSET over the table itself visits every skipped row.
  const pageByIds = async (condition: SQL | undefined): Promise<UserRow[]> => {
    const keys = ctx.db
      .select({ id: user.id })
      .from(user)
      .where(condition)
      .orderBy(...order(true))
      .limit(limit)
      .offset(offset)
    return ctx.db
      .select()
      .from(user)
      .where(inArray(user.id, keys))
      .orderBy(...order(true))
  }
  if (!sqlite && !where && offset > 0) {
    // A deep page of everyone, from the nearer end of the sort index: past the middle, its ids are
    // read in the opposite order from the end (the exact total says where the page lies from
    // there), so no walk is longer than half the table. The rows come back in the query's order.
    const fromEnd = total - offset
    if (fromEnd >= offset + limit) return { users: await pageByIds(undefined), total }
    const keys = ctx.db
      .select({ id: user.id })
      .from(user)
      .orderBy(...order(true, true))
      .limit(Math.min(limit, fromEnd))
      .offset(Math.max(0, fromEnd - limit))
    const users = await ctx.db
      .select()
      .from(user)
      .where(inArray(user.id, keys))
      .orderBy(...order(true))
    return { users, total }
  }
  if (
    !sqlite &&
    search &&
    !query.filter &&
    sortInfo?.column === user.email &&
    search.field === 'email' &&
    search.operator === 'starts_with'
  ) {
    // PostgreSQL, an email prefix sorted by email: the page's addresses from the lower(email)
    // prefix index alone (an index-only scan of the matches and a top-N sort; email is unique, so
    // it orders the page completely), then only those rows. Sorting on `email || ''` keeps the
    // planner off the email index: walking it in order reads every address that sorts before the
    // prefix (most of the table for a late letter), and reading each match's row costs a heap
    // visit per match.
    const emails = ctx.db
      .select({ email: user.email })
      .from(user)
      .where(where)
      .orderBy(direction(sql`${user.email} || ''`))
      .limit(limit)
      .offset(offset)
    const users = await ctx.db.select().from(user).where(inArray(user.email, emails)).orderBy(direction(user.email))
    return { users, total }
  }
  // Walking the sort index pays when matches are dense enough to fill the page early.
  const dense = sortInfo?.indexed === true && total >= 4 * (offset + limit)
  if (
    search &&
    search.operator === 'contains' &&
    !query.filter &&
    sortInfo?.column === searched &&
    (!sqlite || (sortInfo.indexed && asciiPrefix(search.value)))
  ) {
    // A substring sorted by the searched column ("name contains liam, sortBy name"). Its matches
    // are those that start with the term (P: "Liam …", a few ranges of the sort order) and the
    // others (Q: "… Williams"). A walk of the sort index for all of them reads every key before
    // the first match, most of the index for a late letter ("Zoe …"). Instead:
    // - P's first `offset + limit` in the query's order: on SQLite from the ranges of the prefix's
    //   case variants (as for a prefix below); on PostgreSQL their keys from the lower(col) prefix
    //   index alone (index-only, top-N; sorting on `col || ''` keeps the planner off a walk of the
    //   sort index), then their ids from the (col, createdAt, id) index between the first and the
    //   last of those keys;
    // - Q's first ones from a walk of the sort index, skipped when Q is empty (|Q| = the exact
    //   total − P's count from the prefix index) and stopped at P's last key when P fills the
    //   page: no match beyond it can be on the page.
    // The page is the first `offset + limit` of both, in the query's order.
    const k = offset + limit
    const desc = query.direction === 'desc'
    const inP = likeCondition(ctx, searched, 'starts_with', search.value)
    // PostgreSQL: matching on `col || ''` keeps the planner off the trigram index (see below).
    const matched = sqlite ? searched : sql`(${searched} || '')`
    // PostgreSQL: P's count and P's first keys on two connections at once (SQLite runs them in turn).
    const [p, pKeys] = await Promise.all([
      prefixCount(ctx, search.field, search.value),
      sqlite
        ? variantRangeKeys(ctx, searched, search.value, inP, k, desc)
        : ctx.db
            .select({ k: searched })
            .from(user)
            .where(inP)
            .orderBy(direction(sql`${searched} || ''`))
            .limit(k),
    ])
    const ids: Array<string | number> = []
    let bound: SQL | undefined
    const first = pKeys[0]?.k
    const last = pKeys[pKeys.length - 1]?.k
    if (first !== undefined && last !== undefined) {
      if (sqlite) ids.push(...(pKeys as Array<{ r: number }>).map((x) => x.r))
      else {
        const [low, high] = desc ? [last, first] : [first, last]
        const pIds = await ctx.db
          .select({ id: user.id })
          .from(user)
          .where(and(gte(searched, low), lte(searched, high), inP))
          .orderBy(...order(true))
          .limit(k)
        ids.push(...pIds.map((r) => r.id))
      }
      if (p >= k) bound = desc ? gte(searched, last) : lte(searched, last)
    }
    if (total - p > 0) {
      const inQ = and(
        likeCondition(ctx, matched, 'contains', search.value),
        sql`NOT (${likeCondition(ctx, matched, 'starts_with', search.value)})`,
        bound,
      )
      const qIds = await ctx.db
        .select({ id: sqlite ? sql<number>`${rowid}` : user.id })
        .from(user)
        .where(inQ)
        .orderBy(...order(true))
        .limit(k)
      ids.push(...qIds.map((r) => r.id))
    }
    if (ids.length === 0) return { users: [], total }
    const users = await ctx.db
      .select()
      .from(user)
      .where(sqlite ? inArray(rowid, ids) : inArray(user.id, ids as string[]))
      .orderBy(...order(true))
      .limit(limit)
      .offset(offset)
    return { users, total }
  }
  if (!sqlite && dense && search && search.operator === 'contains' && !query.filter) {
    // PostgreSQL, a substring matched by many (the exact total is known by now): walk the sort
    // index, stopping at the page, and read only the page's rows. The planner cannot know how many
    // rows a substring matches and may pick the trigram index instead, then fetch and sort every
    // match (tens of thousands of rows); matching on `col || ''` takes the trigram index out of its
    // choices, as "+col" does on SQLite. Sorted by the searched column, the walk reads it from
    // the index alone, so skipped entries cost no row visit.
    const column = search.field === 'name' ? user.name : user.email
    return { users: await pageByIds(likeCondition(ctx, sql`(${column} || '')`, search.operator, search.value)), total }
  }
  const users = await ctx.db
    .select()
    .from(user)
    .where(where)
    .orderBy(...order(dense))
    .limit(limit)
    .offset(offset)
  return { users, total }
}

/**
 * The control panel's one search box: `value` as a substring of the name, the email or the
 * username (case-insensitive), ANDed with an optional filter, sorted like list-users. A plain
 * scan with its own count (no trigram index nor remembered totals: those serve one column each).
 */
export async function queryUsersAnyText(
  ctx: AuthContext,
  query: Omit<UserQuery, 'search'> & { text: string },
): Promise<{ users: UserRow[]; total: number }> {
  const text = or(
    likeCondition(ctx, user.name, 'contains', query.text),
    likeCondition(ctx, user.email, 'contains', query.text),
    likeCondition(ctx, user.username, 'contains', query.text),
    likeCondition(ctx, user.displayUsername, 'contains', query.text),
  )
  const where = query.filter ? and(text, filterCondition(ctx, query.filter.field, query.filter.operator, query.filter.value)) : text
  const sortInfo = query.sortBy === null ? null : Object.hasOwn(listable(), query.sortBy) ? listable()[query.sortBy] : undefined
  if (sortInfo === undefined) throw new UnanswerableQuery(`unknown sort field ${query.sortBy}`)
  const by = query.direction === 'desc' ? desc : asc
  const total = Number((await firstRow(ctx.db.select({ n: count() }).from(user).where(where)))?.n ?? 0)
  if (total === 0 || query.offset >= total) return { users: [], total }
  const users = await ctx.db
    .select()
    .from(user)
    .where(where)
    .orderBy(...(sortInfo ? [by(sortInfo.column)] : []), ...(isSqlite(ctx) ? [by(sql`${user}.rowid`)] : [by(user.createdAt), by(user.id)]))
    .limit(query.limit)
    .offset(query.offset)
  return { users, total }
}
