import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { type Actor, authorize } from './actor.js'
import { type FilterOperator, type FilterValue, queryUsers, queryUsersAnyText } from './user-search/index.js'
import type { UserQuery } from './user-search/shared.js'

export type { FilterOperator, FilterValue } from './user-search/index.js'

export const SEARCH_FIELDS = ['email', 'name'] as const
export const SEARCH_OPERATORS = ['contains', 'starts_with', 'ends_with'] as const
export const FILTER_OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'not_in', 'contains', 'starts_with', 'ends_with'] as const

export interface ListUsersQuery {
  searchValue?: string
  searchField?: (typeof SEARCH_FIELDS)[number]
  searchOperator?: (typeof SEARCH_OPERATORS)[number]
  limit?: number | string
  offset?: number | string
  sortBy?: string
  sortDirection?: 'asc' | 'desc'
  filterField?: string
  filterValue?: FilterValue
  filterOperator?: FilterOperator
}

export interface ListUsersResult {
  users: UserRow[]
  total: number
  limit?: number
  offset?: number
}

const DEFAULT_LIMIT = 100

function toCount(value: number | string | undefined, fallback: number): number {
  const n = Number(value)
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : fallback
}

/**
 * GET /admin/list-users (SPEC §7, reference §8.5): search and filter ANDed, total counted with
 * the same conditions, sortBy any listed column (ties broken by insertion order), limit 100 by
 * default. A query naming an unknown column or an impossible value answers no users, total 0.
 */
export async function listUsers(ctx: AuthContext, actor: Actor, query: ListUsersQuery): Promise<ListUsersResult> {
  const search = query.searchValue
    ? { field: query.searchField ?? 'email', operator: query.searchOperator ?? 'contains', value: query.searchValue }
    : undefined
  return await answerUserQuery(ctx, actor, query, (common) => queryUsers(ctx, { ...common, ...(search ? { search } : {}) }))
}

/**
 * The control panel's search across name, email and username at once (list-users searches one
 * column, as better-auth does); the same permission, filter, sort and paging as listUsers.
 */
export async function searchUsersEverywhere(
  ctx: AuthContext,
  actor: Actor,
  query: Omit<ListUsersQuery, 'searchField' | 'searchOperator'> & { searchValue: string },
): Promise<ListUsersResult> {
  return await answerUserQuery(ctx, actor, query, (common) => queryUsersAnyText(ctx, { ...common, text: query.searchValue }))
}

/** What both listings share: the permission, the filter, sort and paging, and the empty answer on failure. */
async function answerUserQuery(
  ctx: AuthContext,
  actor: Actor,
  query: Omit<ListUsersQuery, 'searchField' | 'searchOperator' | 'searchValue'>,
  run: (common: Omit<UserQuery, 'search'>) => Promise<{ users: UserRow[]; total: number }>,
): Promise<ListUsersResult> {
  await authorize(ctx, actor, ['user', 'list'], 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS', { type: 'admin.list-users', meta: null })
  const limit = toCount(query.limit, DEFAULT_LIMIT)
  const offset = toCount(query.offset, 0)
  try {
    const { users, total } = await run({
      ...(query.filterValue !== undefined
        ? { filter: { field: query.filterField ?? 'email', operator: query.filterOperator ?? 'eq', value: query.filterValue } }
        : {}),
      sortBy: query.sortBy ?? null,
      direction: query.sortDirection === 'desc' ? 'desc' : 'asc',
      limit,
      offset,
    })
    return { users, total, limit, offset }
  } catch {
    // SPEC §7 Admin list-users: "on failure empty users and total 0" — for a query naming unknown
    // fields (UnanswerableQuery) as much as for a database error. Authorization happens above.
    return { users: [], total: 0 }
  }
}
