import { and, count, gte, inArray, lte, type SQL, sql } from 'drizzle-orm'
import type { AuthContext } from '../../../core/context.js'
import type { UserRow } from '../../../core/sessions.js'
import { user } from '../../../db/schema.js'
import { firstRow, type TransactionOptions } from '../../../db/storage.js'
import type { PagePlan, UserSearchEngine } from './engine.js'
import { escapeLike, likePattern, MAX_REMEMBERED_TERMS, TERM_TOUCH_MS, type UserSearch } from './shared.js'

/**
 * The user search on PostgreSQL: `lower(col) LIKE lower(pattern)` for the GIN trigram indexes
 * (0001_init) and the text_pattern_ops prefix indexes with INCLUDE (col) (0004_list_users_counts),
 * creation time then id for insertion order, sharded term counts (0006_list_users_terms), and
 * page ids read from the (column, createdAt, id) indexes before the page's rows.
 */

/** drizzle spells a statement run for its effect `execute` on PostgreSQL (the handle's type is the SQLite one). */
const execute = (ctx: AuthContext, statement: SQL): Promise<unknown> =>
  (ctx.db as unknown as { execute(query: SQL): Promise<unknown> }).execute(statement)

/**
 * Case-insensitive substring match as `lower(col) LIKE lower(pattern)` rather than ILIKE: the
 * trigram and prefix indexes are built on lower(col), so only this form can use them.
 */
const like = (column: unknown, operator: Parameters<UserSearchEngine['like']>[1], value: string): SQL =>
  sql`lower(${column}) LIKE lower(${likePattern(operator, value)}) ESCAPE '\\'`

/** The isolation of countAndRemember's transaction (see there). */
const countIsolation: TransactionOptions = { isolation: 'read committed' }

/** The page's ids from a walk of the sort index that needs no row, then only those rows (an OFFSET over the table visits every skipped row). */
function pageByIds(ctx: AuthContext, plan: PagePlan, condition: SQL | undefined): Promise<UserRow[]> {
  const { limit, offset } = plan.query
  const keys = ctx.db
    .select({ id: user.id })
    .from(user)
    .where(condition)
    .orderBy(...plan.order(true))
    .limit(limit)
    .offset(offset)
  return ctx.db
    .select()
    .from(user)
    .where(inArray(user.id, keys))
    .orderBy(...plan.order(true))
}

export const postgresUserSearch: UserSearchEngine = {
  like,

  /**
   * `->>` yields text, which would compare numbers and booleans as strings ('10' < '5'); numbers
   * and booleans are cast when the JSON holds that type (else NULL, which matches no comparison,
   * as a value of another type does on SQLite). ISO dates compare byte-wise, as on SQLite.
   */
  additionalField(name, kind) {
    const value = sql`(${user.additionalFields}::jsonb -> ${name})`
    const text = sql`(${user.additionalFields}::jsonb ->> ${name})`
    if (kind === 'number') return sql`(CASE WHEN jsonb_typeof(${value}) = 'number' THEN ${text}::numeric END)`
    if (kind === 'boolean') return sql`(CASE WHEN jsonb_typeof(${value}) = 'boolean' THEN ${text}::boolean END)`
    if (kind === 'date') return sql`(${text} COLLATE "C")`
    return text
  },

  booleanIs(column, operator, value) {
    return operator === 'eq' ? sql`coalesce(${column}, false) = ${value}` : sql`coalesce(${column}, false) <> ${value}`
  },

  bannedCountIs: (flag) => sql`"banned" = ${flag}`,

  insertion: (by) => [by(user.createdAt), by(user.id)],

  unindexed: (column) => column,

  async estimateUserCount(ctx) {
    return Number((await firstRow(ctx.db.select({ n: sql<number>`count(*)` }).from(user)))?.n ?? 0)
  },

  // The planner picks the trigram index itself.
  searchCandidates: async () => null,

  /** `lower(col) LIKE lower(prefix)%`, which the text_pattern_ops index with INCLUDE (col) answers index-only. */
  async prefixCount(ctx, field, prefix) {
    const column = field === 'name' ? user.name : user.email
    const where = sql`lower(${column}) LIKE ${`${escapeLike(prefix.toLowerCase())}%`} ESCAPE '\\'`
    return Number((await firstRow(ctx.db.select({ n: count() }).from(user).where(where)))?.n ?? 0)
  },

  /**
   * The term's row (shard 0, its count when added) plus the changes since (shards 1-16), summed in
   * one statement, so from one snapshot. The pattern is the query's own, lower()ed by SQL as the
   * query does.
   */
  async rememberedTotal(ctx, search) {
    const pattern = likePattern(search.operator, search.value)
    const row = await firstRow(
      ctx.db
        .select({
          n: sql<string | number | null>`sum("n")`,
          usedAt: sql<string | number | null>`max("usedAt") FILTER (WHERE "shard" = 0)`,
          known: sql<boolean | null>`bool_or("shard" = 0)`,
        })
        .from(sql`"userTermCount"`)
        .where(sql`"field" = ${search.field} AND "pattern" = lower(${pattern})`),
    )
    if (!row?.known) return undefined
    const now = ctx.clock.now()
    if (now - Number(row.usedAt ?? 0) > TERM_TOUCH_MS) {
      await execute(
        ctx,
        sql`UPDATE "userTermCount" SET "usedAt" = ${now} WHERE "field" = ${search.field} AND "pattern" = lower(${pattern}) AND "shard" = 0`,
      )
    }
    return Number(row.n ?? 0)
  },

  /**
   * The transaction first locks "user" in SHARE mode (waiting for the writes in flight; new writes
   * wait for it) and bumps the epoch row (see migration 0006_list_users_terms for why). It runs at
   * READ COMMITTED: the SHARE lock already keeps every writer of "user" out of the count (which
   * takes its snapshot after the lock), and two instances adding one term count the same rows;
   * serializable's predicate locks on the scanned index made a first count of a name at 1 M users
   * about 20 ms (a third) slower.
   */
  countAndRemember(ctx, search: UserSearch, countMatches) {
    const pattern = likePattern(search.operator, search.value)
    const now = ctx.clock.now()
    return ctx.storage.transaction(async () => {
      await execute(ctx, sql`LOCK TABLE "user" IN SHARE MODE`)
      await execute(ctx, sql`UPDATE "userTermCount" SET "n" = "n" + 1 WHERE "field" = '' AND "pattern" = '' AND "shard" = 0`)
      await execute(
        ctx,
        sql`DELETE FROM "userTermCount" WHERE ("field", "pattern") IN (SELECT "field", "pattern" FROM "userTermCount" WHERE "shard" = 0 AND "field" <> '' ORDER BY "usedAt" LIMIT greatest(0, (SELECT count(*) FROM "userTermCount" WHERE "shard" = 0 AND "field" <> '') - ${MAX_REMEMBERED_TERMS - 1}))`,
      )
      const total = await countMatches()
      // Another instance may have added the term meanwhile (its count then equals this one: both
      // were taken with every write to "user" held off); its row is kept.
      await execute(
        ctx,
        sql`INSERT INTO "userTermCount" ("field", "pattern", "shard", "n", "usedAt") VALUES (${search.field}, lower(${pattern}), 0, ${total}, ${now}) ON CONFLICT DO NOTHING`,
      )
      return total
    }, countIsolation)
  },

  trigramPlan: async () => undefined,

  // searchCandidates never narrows here.
  narrowedPage: async () => undefined,

  async page(ctx, plan, total) {
    const { query, where, sortInfo, direction } = plan
    const { limit, offset, search } = query
    if (!where && offset > 0) {
      // A deep page of everyone, from the nearer end of the sort index: past the middle, its ids are
      // read in the opposite order from the end (the exact total says where the page lies from
      // there), so no walk is longer than half the table. The rows come back in the query's order.
      const fromEnd = total - offset
      if (fromEnd >= offset + limit) return pageByIds(ctx, plan, undefined)
      const keys = ctx.db
        .select({ id: user.id })
        .from(user)
        .orderBy(...plan.order(true, true))
        .limit(Math.min(limit, fromEnd))
        .offset(Math.max(0, fromEnd - limit))
      return ctx.db
        .select()
        .from(user)
        .where(inArray(user.id, keys))
        .orderBy(...plan.order(true))
    }
    if (search && !query.filter && sortInfo?.column === user.email && search.field === 'email' && search.operator === 'starts_with') {
      // An email prefix sorted by email: the page's addresses from the lower(email) prefix index
      // alone (an index-only scan of the matches and a top-N sort; email is unique, so it orders
      // the page completely), then only those rows. Sorting on `email || ''` keeps the planner off
      // the email index: walking it in order reads every address that sorts before the prefix
      // (most of the table for a late letter), and reading each match's row costs a heap visit
      // per match.
      const emails = ctx.db
        .select({ email: user.email })
        .from(user)
        .where(where)
        .orderBy(direction(sql`${user.email} || ''`))
        .limit(limit)
        .offset(offset)
      return ctx.db.select().from(user).where(inArray(user.email, emails)).orderBy(direction(user.email))
    }
    const searched = search?.field === 'name' ? user.name : user.email
    const dense = sortInfo?.indexed === true && total >= 4 * (offset + limit)
    if (dense && search && search.operator === 'contains' && !query.filter && sortInfo?.column !== searched) {
      // A substring matched by many (the exact total is known by now), sorted on another column:
      // walk the sort index, stopping at the page, and read only the page's rows. The planner
      // cannot know how many rows a substring matches and may pick the trigram index instead, then
      // fetch and sort every match (tens of thousands of rows); matching on `col || ''` takes the
      // trigram index out of its choices, as "+col" does on SQLite. (Sorted by the searched
      // column, index.ts substringPage serves it.)
      return pageByIds(ctx, plan, like(sql`(${searched} || '')`, search.operator, search.value))
    }
    return undefined
  },

  substring: {
    applies: () => true,
    rowKey: () => user.id,
    // Matching on `col || ''` keeps the planner off the trigram index.
    matched: (searched) => sql`(${searched} || '')`,
    /**
     * P's keys from the lower(col) prefix index alone (index-only, top-N; sorting on `col || ''`
     * keeps the planner off a walk of the sort index), then their ids from the (col, createdAt, id)
     * index between the first and the last of those keys.
     */
    async prefixIds(ctx, plan, searched, inP, k) {
      const keys = await ctx.db
        .select({ k: searched })
        .from(user)
        .where(inP)
        .orderBy(plan.direction(sql`${searched} || ''`))
        .limit(k)
      const first = keys[0]?.k
      const last = keys[keys.length - 1]?.k
      if (first === undefined || last === undefined) return { ids: [], last: undefined }
      const [low, high] = plan.query.direction === 'desc' ? [last, first] : [first, last]
      const ids = await ctx.db
        .select({ id: user.id })
        .from(user)
        .where(and(gte(searched, low), lte(searched, high), inP))
        .orderBy(...plan.order(true))
        .limit(k)
      return { ids: ids.map((r) => r.id), last }
    },
  },
}
