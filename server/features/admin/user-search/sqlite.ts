import { and, count, inArray, type SQL, sql } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import type { AuthContext } from '../../../core/context.js'
import type { UserRow } from '../../../core/sessions.js'
import type { DB } from '../../../db/index.js'
import { user } from '../../../db/schema.js'
import { firstRow } from '../../../db/storage.js'
import type { PagePlan, UserSearchEngine } from './engine.js'
import {
  asciiPrefix,
  caseVariants,
  likePattern,
  listUsersTuning,
  MAX_REMEMBERED_TERMS,
  successor,
  TERM_TOUCH_MS,
  TRIGRAM_PHRASE_LIMIT,
  type TextOperator,
  trigramCandidateLimit,
  trigrams,
  type UserSearch,
} from './shared.js'

/**
 * The user search on SQLite: row ids for insertion order and page keys, the FTS5 trigram index of
 * migration 0001_user_search (with its vocabulary counts) for rare substrings, the lower(col)
 * expression indexes for prefix counts, ranges of the BINARY indexes for case variants, and
 * "+col" to keep the planner off an index when sorting few matches is cheaper.
 */

/** `user`.rowid, built per call: the table binding holds the table only once the composition root handed it down. */
const rowid = (): SQL => sql`${user}.rowid`

/** SQLite's LIKE is case-insensitive (ASCII). */
const like = (column: SQLiteColumn | SQL, operator: TextOperator, value: string): SQL =>
  sql`${column} LIKE ${likePattern(operator, value)} ESCAPE '\\'`

/** The LIKE pattern as the term rows hold it: ASCII letters lower-cased (LIKE folds ASCII only, so 'Liam' and 'liam' share a row). */
const termPattern = (search: UserSearch): string => likePattern(search.operator, search.value).replace(/[A-Z]/g, (c) => c.toLowerCase())

const ftsPhrase = (search: { field: 'email' | 'name'; value: string }): string => `${search.field} : "${search.value.replace(/"/g, '""')}"`

async function estimateUserCount(ctx: AuthContext): Promise<number> {
  // max(rowid) in O(log n): deletions only make it larger.
  return Number((await firstRow(ctx.db.select({ n: sql<number>`coalesce(max(${user}.rowid), 0)` }).from(user)))?.n ?? 0)
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

/**
 * The first `k` rows (row id and key, in the order key, rowid) whose indexed text column starts
 * with an ASCII case variant of `prefix`'s first six characters and meets `condition`: each
 * variant is one range of the column's BINARY index (read index-only, at most `k` entries each,
 * at most 64 variants), merged in the query's order.
 */
async function variantRangeKeys(
  ctx: AuthContext,
  column: SQLiteColumn,
  prefix: string,
  condition: SQL | undefined,
  k: number,
  desc: boolean,
): Promise<Array<{ r: number; k: string }>> {
  const dir = sql.raw(desc ? 'DESC' : 'ASC')
  const branches = caseVariants(prefix.slice(0, 6)).map(
    (low) =>
      sql`SELECT * FROM (SELECT ${rowid()} AS r, ${column} AS k FROM ${user} WHERE ${column} >= ${low} AND ${column} < ${successor(low)} AND ${condition ?? sql`1`} ORDER BY ${column} ${dir}, ${rowid()} ${dir} LIMIT ${k})`,
  )
  return ctx.db.all<{ r: number; k: string }>(
    sql`SELECT r, k FROM (${sql.join(branches, sql` UNION ALL `)}) ORDER BY k ${dir}, r ${dir} LIMIT ${k}`,
  )
}

/** The rows of these row ids, in the query's order. */
const rowsByRowid = (ctx: AuthContext, plan: PagePlan, ids: number[] | SQL): Promise<UserRow[]> =>
  ctx.db
    .select()
    .from(user)
    .where(inArray(rowid(), ids as number[]))
    .orderBy(...plan.order(true))

export const sqliteUserSearch: UserSearchEngine = {
  like,

  additionalField(name) {
    return sql`json_extract(${user.additionalFields}, ${`$."${name.replace(/"/g, '')}"`})`
  },

  booleanIs(column, operator, value) {
    return operator === 'eq' ? sql`coalesce(${column}, 0) = ${value ? 1 : 0}` : sql`coalesce(${column}, 0) <> ${value ? 1 : 0}`
  },

  bannedCountIs: (flag) => sql`"banned" = ${flag ? 1 : 0}`,

  insertion: (by) => [by(rowid())],

  unindexed: (column) => sql`+${column}`,

  estimateUserCount,

  /**
   * Narrows a substring search through the trigram index when it pays: the term has at least 3
   * characters and its rarest trigram occurs in few rows. The LIKE condition is always applied as
   * well, so the index only ever removes rows that cannot match.
   */
  async searchCandidates(ctx, field, term) {
    const grams = trigrams(term)
    if (grams.length === 0) return null
    const counts = await trigramDocCounts(ctx, field, grams)
    // A trigram absent from the index: nothing can match.
    if (counts.some((n) => n === 0)) return sql`0`
    if (Math.min(...counts) > trigramCandidateLimit(await estimateUserCount(ctx))) return null
    return sql`${user.id} IN (SELECT userId FROM user_search WHERE user_search MATCH ${ftsPhrase({ field, value: term })})`
  },

  /**
   * A range [lower(prefix), successor) on the lower(col) expression index: exact for an ASCII
   * prefix (SQLite's lower() and LIKE fold ASCII only, and the range holds exactly the strings
   * starting with it).
   */
  async prefixCount(ctx, field, prefix) {
    const column = field === 'name' ? user.name : user.email
    const low = prefix.toLowerCase()
    const where = sql`lower(${column}) >= ${low} AND lower(${column}) < ${successor(low)}`
    return Number((await firstRow(ctx.db.select({ n: count() }).from(user).where(where)))?.n ?? 0)
  },

  async rememberedTotal(ctx, search) {
    const pattern = termPattern(search)
    const row = await firstRow(
      ctx.db
        .select({ n: sql<number>`"n"`, usedAt: sql<number>`"usedAt"` })
        .from(sql`"userTermCount"`)
        .where(sql`"field" = ${search.field} AND "pattern" = ${pattern}`),
    )
    if (!row) return undefined
    const now = ctx.clock.now()
    if (now - Number(row.usedAt) > TERM_TOUCH_MS) {
      await ctx.db.run(sql`UPDATE "userTermCount" SET "usedAt" = ${now} WHERE "field" = ${search.field} AND "pattern" = ${pattern}`)
    }
    return Number(row.n)
  },

  /** In one transaction holding the write lock (BEGIN IMMEDIATE) from before the count to the commit. */
  countAndRemember(ctx, search, countMatches) {
    const pattern = termPattern(search)
    const now = ctx.clock.now()
    return ctx.storage.transaction(async () => {
      await ctx.db.run(
        sql`DELETE FROM "userTermCount" WHERE ("field", "pattern") IN (SELECT "field", "pattern" FROM "userTermCount" ORDER BY "usedAt" LIMIT max(0, (SELECT count(*) FROM "userTermCount") - ${MAX_REMEMBERED_TERMS - 1}))`,
      )
      const total = await countMatches()
      await ctx.db.run(
        sql`INSERT INTO "userTermCount" ("field", "pattern", "n", "usedAt") VALUES (${search.field}, ${pattern}, ${total}, ${now}) ON CONFLICT DO NOTHING`,
      )
      return total
    })
  },

  /**
   * The candidates are the FTS rows holding the term as a phrase of trigrams (case folded the
   * Unicode way, so never fewer than LIKE's matches), re-checked with the query's own LIKE on the
   * index's copy of the column (kept by the triggers of 0001_user_search). Undefined when it would
   * cost more than the scan (a term under 3 characters, a common term).
   */
  async trigramPlan(ctx, search) {
    const grams = trigrams(search.value)
    if (grams.length === 0) return undefined
    const counts = await trigramDocCounts(ctx, search.field, grams)
    // A trigram absent from the index (never remembered, so current): nothing can match.
    if (counts.some((n) => n === 0)) return { candidates: 0, count: async () => 0 }
    if (Math.min(...counts) > TRIGRAM_PHRASE_LIMIT) return undefined
    const phrase = ftsPhrase(search)
    const candidates = Number(
      (await firstRow(ctx.db.select({ n: count() }).from(sql`user_search`).where(sql`user_search MATCH ${phrase}`)))?.n ?? 0,
    )
    if (candidates > listUsersTuning.trigramCountLimit) return undefined
    const recheck = like(sql.raw(search.field === 'name' ? 'name' : 'email'), search.operator, search.value)
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
  },

  /** Few candidates: one pass sorts their row ids and counts them; then the page's rows. */
  async narrowedPage(ctx, plan) {
    const { limit, offset } = plan.query
    const page = await ctx.db
      .select({ r: rowid(), total: sql<number>`count(*) OVER ()` })
      .from(user)
      .where(plan.where)
      .orderBy(...plan.order(false))
      .limit(limit)
      .offset(offset)
    if (page.length === 0) return undefined
    const rows = await ctx.db
      .select({ u: user, r: rowid() })
      .from(user)
      .where(
        inArray(
          rowid(),
          page.map((p) => p.r),
        ),
      )
    const byRowid = new Map(rows.map((x) => [x.r, x.u]))
    const users = page.map((p) => byRowid.get(p.r)).filter((u): u is UserRow => u !== undefined)
    return { users, total: Number(page[0]?.total ?? 0) }
  },

  async page(ctx, plan, total) {
    const { query, where, sortInfo, direction } = plan
    const { limit, offset, search } = query
    const searched = search?.field === 'name' ? user.name : user.email
    if (search && !query.filter && trigrams(search.value).length > 0) {
      // A search alone whose matches are sparse (the exact total is known by now): a walk in page
      // order would read about (offset + limit) × rows / total rows before the page is full, the
      // whole table when a term matches a few hundred users. Past `sparseWalkRows`, the matches
      // come from the trigram index instead (its phrase candidates are the matches, plus only rows
      // whose Unicode case folding differs from LIKE's, which the LIKE removes), few by then
      // (under ~2 000 for a first page at 1 M users), sorted without walking an index.
      const walked = ((offset + limit) * (await estimateUserCount(ctx))) / total
      if (walked > listUsersTuning.sparseWalkRows) {
        const sortKey = sortInfo ? [direction(sql`+${sortInfo.column}`)] : []
        return ctx.db
          .select()
          .from(user)
          .where(and(sql`${user.id} IN (SELECT userId FROM user_search WHERE user_search MATCH ${ftsPhrase(search)})`, where))
          .orderBy(...sortKey, direction(sql`+${rowid()}`))
          .limit(limit)
          .offset(offset)
      }
    }
    if (
      search &&
      !query.filter &&
      search.operator === 'starts_with' &&
      asciiPrefix(search.value) &&
      sortInfo?.column === searched &&
      sortInfo.indexed
    ) {
      // A prefix sorted by the searched column ("email starts with li, sortBy email"): LIKE folds
      // case, so it cannot seek the column's BINARY index, and a walk of that index reads every key
      // before the prefix. But the keys starting with a case variant of an ASCII prefix ("li",
      // "lI", "Li", "LI") are each one range of that index: the first `offset + limit` of each
      // range (index-only), merged in the query's order, hold the page. Variants of the first six
      // characters at most (64 ranges); LIKE re-checks the rest of a longer prefix in each range.
      const keys = await variantRangeKeys(ctx, searched, search.value, where, offset + limit, query.direction === 'desc')
      const page = keys.slice(offset, offset + limit)
      if (page.length === 0) return []
      return rowsByRowid(
        ctx,
        plan,
        page.map((x) => x.r),
      )
    }
    if (!where && (!sortInfo || sortInfo.indexed)) {
      // A page of everyone: walk only the (covering) index to the page, then fetch its rows.
      const keys = ctx.db
        .select({ r: rowid() })
        .from(user)
        .orderBy(...plan.order(true))
        .limit(limit)
        .offset(offset)
      return rowsByRowid(ctx, plan, keys as unknown as SQL)
    }
    return undefined
  },

  substring: {
    applies: (sortInfo, value) => sortInfo.indexed && asciiPrefix(value),
    rowKey: () => rowid(),
    matched: (searched) => searched,
    async prefixIds(ctx, plan, searched, inP, k) {
      const search = plan.query.search as UserSearch
      const keys = await variantRangeKeys(ctx, searched, search.value, inP, k, plan.query.direction === 'desc')
      return { ids: keys.map((x) => x.r), last: keys[keys.length - 1]?.k }
    },
  },
}
