import { and, asc, count, desc, eq, gt, gte, inArray, lt, lte, ne, notInArray, or, type SQL, sql } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import type { AuthContext } from '../../../core/context.js'
import type { UserRow } from '../../../core/sessions.js'
import type { DB } from '../../../db/index.js'
import { user } from '../../../db/schema.js'
import { firstRow } from '../../../db/storage.js'
import type { PagePlan, UserSearchEngine } from './engine.js'
import { postgresUserSearch } from './postgres.js'
import { sqliteUserSearch } from './sqlite.js'
import {
  asciiPrefix,
  type ColumnKind,
  coerce,
  ExactTotalCache,
  type FilterOperator,
  type FilterValue,
  listable,
  listUsersTuning,
  type TotalPath,
  UnanswerableQuery,
  type UserQuery,
} from './shared.js'

export {
  type FilterOperator,
  type FilterValue,
  listUsersTuning,
  MAX_REMEMBERED_TERMS,
  type TotalPath,
  UnanswerableQuery,
  type UserQuery,
} from './shared.js'

/**
 * The user search behind list-users (admin's list, the panel's Users view): one page of users and
 * the exact total, search and filter ANDed, sorted on a listed column with ties broken by
 * insertion order. This is the shared half; each dialect's indexes and fast paths sit in its
 * engine (sqlite.ts, postgres.ts, one interface in engine.ts), chosen once per call here.
 */

const engineOf = (ctx: AuthContext): UserSearchEngine => (ctx.storage.dialect === 'sqlite' ? sqliteUserSearch : postgresUserSearch)

/** A configured additional user field (user.additionalFields) as a filter target. Dates are stored as ISO strings, so they compare as ISO strings. */
function additionalFieldTarget(
  ctx: AuthContext,
  engine: UserSearchEngine,
  name: string,
): { column: SQL; kind: ColumnKind; json: true } | undefined {
  const fields = ctx.config().user.additionalFields
  const def = Object.hasOwn(fields, name) ? fields[name] : undefined
  if (!def) return undefined
  const kind: ColumnKind = def.type === 'string' ? 'text' : def.type
  return { column: engine.additionalField(name, kind), kind, json: true }
}

function filterCondition(ctx: AuthContext, engine: UserSearchEngine, fieldName: string, operator: FilterOperator, raw: FilterValue): SQL {
  const field: { column: SQLiteColumn | SQL; kind: ColumnKind; json?: true } | undefined = Object.hasOwn(listable(), fieldName)
    ? listable()[fieldName]
    : additionalFieldTarget(ctx, engine, fieldName)
  if (!field) throw new UnanswerableQuery(`unknown field ${fieldName}`)
  // Typed as SQL for drizzle's operator overloads; a real column still binds through its own mapping.
  const column = field.column as SQL
  const { kind } = field
  // A JSON value is compared as JSON holds it: dates as their ISO strings.
  const bind = (v: string | number | boolean | Date) => (field.json && v instanceof Date ? v.toISOString() : v)
  if (operator === 'contains' || operator === 'starts_with' || operator === 'ends_with') {
    if (kind !== 'text' || Array.isArray(raw)) throw new UnanswerableQuery('text operator on a non-text value')
    return engine.like(column, operator, String(raw))
  }
  if (operator === 'in' || operator === 'not_in') {
    const list = (Array.isArray(raw) ? raw : String(raw).split(',')).map((v) => bind(coerce(kind, v)))
    if (list.length === 0) throw new UnanswerableQuery('empty list')
    return operator === 'in' ? inArray(column, list) : notInArray(column, list)
  }
  if (Array.isArray(raw)) throw new UnanswerableQuery('list value for a scalar operator')
  const value = bind(coerce(kind, raw))
  // Rows written before the column existed hold NULL, which means false.
  if (kind === 'boolean' && (operator === 'eq' || operator === 'ne')) return engine.booleanIs(column, operator, value === true)
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

/** About how many users there are, cheaply (SQLite: max(rowid); elsewhere a count). */
export function estimateUserCount(ctx: AuthContext): Promise<number> {
  return engineOf(ctx).estimateUserCount(ctx)
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
 * The condition on the maintained `userCount` rows (migration list_users_counts: users per exact
 * role string, '' for NULL, and ban state, NULL as not banned) that sums to the total of a query
 * without a search, or undefined when the filter is not one they answer: none (everyone),
 * `role eq|in` non-empty strings (`ne` would need NULL roles apart from ''), `banned eq|ne`.
 */
function maintainedCondition(engine: UserSearchEngine, filter: UserQuery['filter']): SQL | undefined {
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
    return engine.bannedCountIs(coerce('boolean', value) === (operator === 'eq'))
  }
  return undefined
}

/**
 * The exact total of a query without a page, by the cheapest exact means: the maintained counts
 * (everyone, a role, a ban state), the lower(col) index (an ASCII starts_with search alone), for a
 * search alone a remembered term total, then (SQLite) the trigram index when the term's candidates
 * are few, else a count that remembers the term; anything else `count(*)` with the query's own
 * conditions through the exact-total cache.
 */
async function exactTotal(
  ctx: AuthContext,
  engine: UserSearchEngine,
  query: Pick<UserQuery, 'search' | 'filter'>,
  where: SQL | undefined,
): Promise<{ total: number; path: TotalPath }> {
  const { search, filter } = query
  if (!search) {
    const condition = maintainedCondition(engine, filter)
    if (condition) {
      const row = await firstRow(ctx.db.select({ n: sql<number | string>`coalesce(sum("n"), 0)` }).from(sql`"userCount"`).where(condition))
      return { total: Number(row?.n ?? 0), path: 'maintained' }
    }
  } else if (!filter) {
    if (search.operator === 'starts_with' && asciiPrefix(search.value)) {
      return { total: await engine.prefixCount(ctx, search.field, search.value), path: 'prefix' }
    }
    const remembered = await engine.rememberedTotal(ctx, search)
    if (remembered !== undefined) return { total: remembered, path: 'term' }
    // Few candidates: counted through the trigram index each time (no write). More: counted once
    // (through the trigram index, or by a scan when they are too many) and remembered.
    const viaIndex = await engine.trigramPlan(ctx, search)
    if (viaIndex && viaIndex.candidates <= listUsersTuning.trigramRememberFrom) return { total: await viaIndex.count(), path: 'trigram' }
    const scan = async () => Number((await firstRow(ctx.db.select({ n: count() }).from(user).where(where)))?.n ?? 0)
    return { total: await engine.countAndRemember(ctx, search, viaIndex?.count ?? scan), path: 'counted' }
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

/** Builds the WHERE of a query (search ANDed with filter) and whether an index narrowed the search. */
async function conditionsOf(
  ctx: AuthContext,
  engine: UserSearchEngine,
  query: Pick<UserQuery, 'search' | 'filter'>,
): Promise<{ where: SQL | undefined; narrowed: boolean }> {
  const conditions: SQL[] = []
  let narrowed = false
  if (query.search) {
    const { field, operator, value } = query.search
    const candidates = await engine.searchCandidates(ctx, field, value)
    if (candidates) {
      conditions.push(candidates)
      narrowed = true
    }
    conditions.push(engine.like(field === 'name' ? user.name : user.email, operator, value))
  }
  if (query.filter) conditions.push(filterCondition(ctx, engine, query.filter.field, query.filter.operator, query.filter.value))
  return { where: conditions.length > 0 ? and(...conditions) : undefined, narrowed }
}

/** The total of a query alone, with the path that found it (for the exactness tests and benches). */
export async function countUsers(
  ctx: AuthContext,
  query: Pick<UserQuery, 'search' | 'filter'>,
): Promise<{ total: number; path: TotalPath }> {
  const engine = engineOf(ctx)
  const { where } = await conditionsOf(ctx, engine, query)
  return exactTotal(ctx, engine, query, where)
}

/**
 * One page of users and the total matching: search and filter ANDed, total counted with the same
 * conditions, sorted on a listed column with ties broken by insertion order. Throws
 * UnanswerableQuery for a query naming an unknown column or an impossible value.
 */
export async function queryUsers(ctx: AuthContext, query: UserQuery): Promise<{ users: UserRow[]; total: number }> {
  const engine = engineOf(ctx)
  const { limit, offset } = query
  const { where, narrowed } = await conditionsOf(ctx, engine, query)
  const sortInfo = query.sortBy === null ? null : Object.hasOwn(listable(), query.sortBy) ? listable()[query.sortBy] : undefined
  if (sortInfo === undefined) throw new UnanswerableQuery(`unknown sort field ${query.sortBy}`)
  // `reversed`: the opposite of the query's order (a page read from the far end, then put back).
  const directionOf = (reversed: boolean) => ((query.direction === 'desc') !== reversed ? desc : asc)
  const plan: PagePlan = {
    query,
    where,
    sortInfo,
    direction: directionOf(false),
    order(useIndex, reversed = false) {
      const insertion = engine.insertion(directionOf(reversed))
      if (!sortInfo) return insertion
      return [directionOf(reversed)(useIndex ? sortInfo.column : engine.unindexed(sortInfo.column)), ...insertion]
    },
  }
  if (narrowed) {
    const page = await engine.narrowedPage(ctx, plan)
    return page ?? { users: [], total: (await exactTotal(ctx, engine, query, where)).total }
  }
  const { total } = await exactTotal(ctx, engine, query, where)
  if (total === 0 || offset >= total) return { users: [], total }
  const fast = await engine.page(ctx, plan, total)
  if (fast) return { users: fast, total }
  const search = query.search
  const searched = search?.field === 'name' ? user.name : user.email
  if (
    search &&
    search.operator === 'contains' &&
    !query.filter &&
    sortInfo?.column === searched &&
    engine.substring.applies(sortInfo, search.value)
  ) {
    return { users: await substringPage(ctx, engine, plan, searched, total), total }
  }
  // Walking the sort index pays when matches are dense enough to fill the page early.
  const dense = sortInfo?.indexed === true && total >= 4 * (offset + limit)
  const users = await ctx.db
    .select()
    .from(user)
    .where(where)
    .orderBy(...plan.order(dense))
    .limit(limit)
    .offset(offset)
  return { users, total }
}

/**
 * A substring sorted by the searched column ("name contains liam, sortBy name"). Its matches are
 * those that start with the term (P: "Liam …", a few ranges of the sort order) and the others
 * (Q: "… Williams"). A walk of the sort index for all of them reads every key before the first
 * match, most of the index for a late letter ("Zoe …"). Instead:
 * - P's first `offset + limit` in the query's order, by the engine (SQLite: the ranges of the
 *   prefix's case variants; PostgreSQL: the lower(col) prefix index, then the sort index between
 *   the first and last of those keys);
 * - Q's first ones from a walk of the sort index, skipped when Q is empty (|Q| = the exact total −
 *   P's count from the prefix index) and stopped at P's last key when P fills the page: no match
 *   beyond it can be on the page.
 * The page is the first `offset + limit` of both, in the query's order.
 */
async function substringPage(
  ctx: AuthContext,
  engine: UserSearchEngine,
  plan: PagePlan,
  searched: SQLiteColumn,
  total: number,
): Promise<UserRow[]> {
  const { limit, offset } = plan.query
  const search = plan.query.search as NonNullable<UserQuery['search']>
  const k = offset + limit
  const inP = engine.like(searched, 'starts_with', search.value)
  const matched = engine.substring.matched(searched)
  // PostgreSQL: P's count and P's first keys on two connections at once (SQLite runs them in turn).
  const [p, prefix] = await Promise.all([
    engine.prefixCount(ctx, search.field, search.value),
    engine.substring.prefixIds(ctx, plan, searched, inP, k),
  ])
  const ids = [...prefix.ids]
  const last = prefix.last
  const bound = last !== undefined && p >= k ? (plan.query.direction === 'desc' ? gte(searched, last) : lte(searched, last)) : undefined
  if (total - p > 0) {
    const inQ = and(engine.like(matched, 'contains', search.value), sql`NOT (${engine.like(matched, 'starts_with', search.value)})`, bound)
    const qIds = await ctx.db
      .select({ id: sql<string | number>`${engine.substring.rowKey()}` })
      .from(user)
      .where(inQ)
      .orderBy(...plan.order(true))
      .limit(k)
    ids.push(...qIds.map((r) => r.id))
  }
  if (ids.length === 0) return []
  return ctx.db
    .select()
    .from(user)
    .where(inArray(engine.substring.rowKey() as SQL, ids))
    .orderBy(...plan.order(true))
    .limit(limit)
    .offset(offset)
}

/**
 * The control panel's one search box: `text` as a substring of the name, the email or the
 * username (case-insensitive), ANDed with an optional filter, sorted like list-users. A plain
 * scan with its own count (no trigram index nor remembered totals: those serve one column each).
 */
export async function queryUsersAnyText(
  ctx: AuthContext,
  query: Omit<UserQuery, 'search'> & { text: string },
): Promise<{ users: UserRow[]; total: number }> {
  const engine = engineOf(ctx)
  const text = or(
    engine.like(user.name, 'contains', query.text),
    engine.like(user.email, 'contains', query.text),
    engine.like(user.username, 'contains', query.text),
    engine.like(user.displayUsername, 'contains', query.text),
  )
  const where = query.filter ? and(text, filterCondition(ctx, engine, query.filter.field, query.filter.operator, query.filter.value)) : text
  const sortInfo = query.sortBy === null ? null : Object.hasOwn(listable(), query.sortBy) ? listable()[query.sortBy] : undefined
  if (sortInfo === undefined) throw new UnanswerableQuery(`unknown sort field ${query.sortBy}`)
  const by = query.direction === 'desc' ? desc : asc
  const total = Number((await firstRow(ctx.db.select({ n: count() }).from(user).where(where)))?.n ?? 0)
  if (total === 0 || query.offset >= total) return { users: [], total }
  const users = await ctx.db
    .select()
    .from(user)
    .where(where)
    .orderBy(...(sortInfo ? [by(sortInfo.column)] : []), ...engine.insertion(by))
    .limit(query.limit)
    .offset(query.offset)
  return { users, total }
}
