import type { asc, SQL } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import type { AuthContext } from '../../../core/context.js'
import type { UserRow } from '../../../core/sessions.js'
import type { ColumnKind, ListableColumn, TextOperator, UserQuery, UserSearch } from './shared.js'

/** An ORDER BY direction: drizzle's `asc` or `desc`. */
export type Direction = typeof asc

/** A list-users query ready to page: its conditions, sort and the order builder for this engine. */
export interface PagePlan {
  query: UserQuery
  where: SQL | undefined
  sortInfo: ListableColumn | null
  direction: Direction
  /** The query's ORDER BY (`reversed`: from the far end); `useIndex` false keeps SQLite off the sort column's index. */
  order(useIndex: boolean, reversed?: boolean): SQL[]
}

/**
 * The dialect half of list-users (index.ts is the other, shared half): how each engine matches,
 * counts and pages users fastest. One implementation per dialect, sqlite.ts and postgres.ts; the
 * shared half never asks which dialect it runs on.
 */
export interface UserSearchEngine {
  /** Case-insensitive match of a text operator, in the form this engine's indexes serve. */
  like(column: SQLiteColumn | SQL, operator: TextOperator, value: string): SQL
  /** A configured additional field's value, read from the JSON column and typed as `kind`. */
  additionalField(name: string, kind: ColumnKind): SQL
  /** A boolean column compared with a flag, NULL meaning false. */
  booleanIs(column: SQL, operator: 'eq' | 'ne', value: boolean): SQL
  /** The maintained `userCount` rows' condition on the ban state. */
  bannedCountIs(flag: boolean): SQL
  /** Insertion order (ties of every sort). */
  insertion(by: Direction): SQL[]
  /** A sort key that keeps the planner off the column's index (when sorting the few matches is cheaper). */
  unindexed(column: SQLiteColumn): SQL | SQLiteColumn
  /** About how many users there are, cheaply. */
  estimateUserCount(ctx: AuthContext): Promise<number>
  /** A condition that narrows a search through an index when that pays (ANDed with the LIKE), or null. */
  searchCandidates(ctx: AuthContext, field: 'email' | 'name', term: string): Promise<SQL | null>
  /** `col LIKE 'prefix%'` counted from an index alone. */
  prefixCount(ctx: AuthContext, field: 'email' | 'name', prefix: string): Promise<number>
  /** A remembered search term's exact total, or undefined when the term is not remembered. */
  rememberedTotal(ctx: AuthContext, search: UserSearch): Promise<number | undefined>
  /** Counts a search's matches and remembers the term, with no write to "user" falling in between. */
  countAndRemember(ctx: AuthContext, search: UserSearch, countMatches: () => Promise<number>): Promise<number>
  /** How to count a search alone through a trigram index when its candidates are few; undefined: no such index or too many. */
  trigramPlan(ctx: AuthContext, search: UserSearch): Promise<{ candidates: number; count: () => Promise<number> } | undefined>
  /** The page of a query whose search was narrowed by `searchCandidates`, counted in the same pass; undefined when the page is empty. */
  narrowedPage(ctx: AuthContext, plan: PagePlan): Promise<{ users: UserRow[]; total: number } | undefined>
  /** The page by one of this engine's fast paths, or undefined to let the shared paths do it. */
  page(ctx: AuthContext, plan: PagePlan, total: number): Promise<UserRow[] | undefined>
  /**
   * A substring sorted by the searched column (index.ts substringPage): whether this engine can
   * serve it so, its row key, the column matched for the non-prefix part, and the ids of the first
   * `k` matches that start with the term, in the query's order.
   */
  substring: {
    applies(sortInfo: ListableColumn, value: string): boolean
    rowKey(): SQL | SQLiteColumn
    matched(searched: SQLiteColumn): SQL | SQLiteColumn
    prefixIds(
      ctx: AuthContext,
      plan: PagePlan,
      searched: SQLiteColumn,
      inP: SQL,
      k: number,
    ): Promise<{ ids: Array<string | number>; last: string | undefined }>
  }
}
