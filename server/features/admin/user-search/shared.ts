import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import { user } from '../../../db/schema.js'
import type { ChangeSignal } from '../../../db/storage.js'

/**
 * What both engines of the user search share: the query's types, the listable columns, value
 * coercion, pattern helpers, tuning and the exact-total cache. No SQL of either dialect.
 */

export type ColumnKind = 'text' | 'boolean' | 'date' | 'number'
export type TextOperator = 'contains' | 'starts_with' | 'ends_with'
export type FilterOperator = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'in' | 'not_in' | TextOperator
export type FilterValue = string | number | boolean | Array<string | number>

/** A query that cannot be answered (unknown column, impossible value): list-users then answers no users. */
export class UnanswerableQuery extends Error {}

export interface ListableColumn {
  column: SQLiteColumn
  kind: ColumnKind
  indexed: boolean
}

type Listable = Record<string, ListableColumn>
let listableFor: { table: typeof user; columns: Listable } | undefined

/**
 * The user columns list-users may filter and sort on (anything else fails the query). Built on
 * use, not at import: on PostgreSQL the table exports are rebound to the pg-core mirror after this
 * module loads, and a column of the SQLite table would bind its values the SQLite way.
 */
export function listable(): Listable {
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
        // The anonymous feature's flag (NULL, on users made while it was off, reads as false).
        isAnonymous: { column: user.isAnonymous, kind: 'boolean', indexed: false },
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

export type UserSearch = NonNullable<UserQuery['search']>

/**
 * A search goes through the trigram index when its rarest trigram occurs in at most this many
 * rows: a fiftieth of the table, between 500 and 2 000 (measured at 100 000 users: phrase
 * matching costs about as much as a covering-index LIKE scan once a few thousand rows match).
 * Above that the plain scan, which also fills a page early, is cheaper.
 */
export const trigramCandidateLimit = (rows: number): number => Math.max(500, Math.min(2_000, Math.floor(rows / 50)))

export const escapeLike = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`)

/** The LIKE pattern of a text operator (value escaped). */
export function likePattern(operator: TextOperator, value: string): string {
  const v = escapeLike(value)
  return operator === 'starts_with' ? `${v}%` : operator === 'ends_with' ? `%${v}` : `%${v}%`
}

export function coerce(kind: ColumnKind, value: string | number | boolean): string | number | boolean | Date {
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

/** Trigrams of a search term, as the FTS5 trigram tokenizer (case-insensitive) stores them. */
export function trigrams(term: string): string[] {
  const chars = [...term.toLowerCase()]
  const out = new Set<string>()
  for (let i = 0; i + 3 <= chars.length; i++) out.add(chars.slice(i, i + 3).join(''))
  return [...out]
}

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

/**
 * How a total was found (tests check each path against a plain count): `term` a remembered term
 * total (kept exact by triggers), `trigram` counted through SQLite's trigram index, `counted` a
 * plain count (for a search alone, then remembered as a term).
 */
export type TotalPath = 'maintained' | 'prefix' | 'term' | 'trigram' | 'cached' | 'counted'

/** A non-empty printable-ASCII prefix: lower() folds it exactly as LIKE does, on both engines. */
export const asciiPrefix = (value: string): boolean => /^[\x20-\x7e]+$/.test(value)

/** Every ASCII case variant of a string ("li" → li, lI, Li, LI). */
export function caseVariants(value: string): string[] {
  let out = ['']
  for (const c of value) {
    const lowerC = c.toLowerCase()
    const upperC = c.toUpperCase()
    out = lowerC === upperC ? out.map((v) => v + c) : out.flatMap((v) => [v + lowerC, v + upperC])
  }
  return out
}

/** The least string above every string that starts with `value` (printable ASCII, BINARY order). */
export const successor = (value: string): string => value.slice(0, -1) + String.fromCharCode(value.charCodeAt(value.length - 1) + 1)

/** At most this many search terms are remembered; the least recently used is forgotten first. */
export const MAX_REMEMBERED_TERMS = 256
/** A remembered term's `usedAt` is rewritten at most this often (a read should rarely write). */
export const TERM_TOUCH_MS = 10 * 60_000
/**
 * Tuning of list-users (tests change it to send small populations down the paths of large ones).
 * `trigramCountLimit`: above this many phrase candidates a trigram count (about 2 µs a candidate
 * at 1 M users) is dearer than a scan. `trigramRememberFrom`: a search with more candidates than
 * this is remembered once counted (a write), fewer are counted again each time. `sparseWalkRows`: (SQLite) a page walk expected to read
 * more rows than this takes a search's matches from the trigram index instead.
 */
export const listUsersTuning = { trigramCountLimit: 40_000, trigramRememberFrom: 5_000, sparseWalkRows: 50_000 }
/** Counting a term's phrase candidates reads the doclists of its trigrams: skip it when one is this common. */
export const TRIGRAM_PHRASE_LIMIT = 200_000
