import { and, asc, count, desc, eq, isNotNull, like, lt, or, sql } from 'drizzle-orm'
import type Database from 'better-sqlite3'
import type { AuthContext } from '../../auth/context.js'
import { ChangeGuardedCache } from '../../auth/session-cache.js'
import type { DB } from '../../db/index.js'
import { apikey, member, user } from '../../db/schema.js'
import type { ApiKeyRow } from './schema.js'

/**
 * Every SQL statement of the api-key feature, and the in-memory cache keys are verified from.
 *
 * The cache maps a key's hash to its row. Every write made here (create, update, disable,
 * delete) empties it at once; verifications update the cached row in place, so it never lags
 * this process. Another process's commits (`PRAGMA data_version`) empty it too, looked for at
 * most every 250 ms.
 *
 * Counters of a key with a quota (`remaining`) are written before the request is answered. Those
 * of other keys (last use, rate-limit window) are kept in the cached row, which is authoritative
 * in this process, and written together at most a second later, before any other read or write
 * of keys here and when the server stops: a verification then costs no disk sync. A crash loses
 * at most that second of last-use times and rate-limit counts, never a quota use.
 */
class KeyCache {
  readonly rows = new Map<string, ApiKeyRow>()
  private readonly version: Database.Statement
  private seen = -1
  private checkedAt = Number.NEGATIVE_INFINITY

  constructor(sqlite: Database.Database) {
    this.version = sqlite.prepare('pragma data_version').pluck()
  }

  fresh(flush: () => void): Map<string, ApiKeyRow> {
    const now = performance.now()
    if (now - this.checkedAt >= 250) {
      this.checkedAt = now
      const v = Number(this.version.get())
      if (v !== this.seen) {
        flush()
        this.rows.clear()
        this.seen = v
      }
    }
    return this.rows
  }
}

interface Prepared {
  cache: KeyCache
  byHash: { get(params: { key: string }): ApiKeyRow | undefined }
  owner: { get(params: { id: string }): typeof user.$inferSelect | undefined }
  owners: ChangeGuardedCache<typeof user.$inferSelect>
  usage: Database.Statement
  /** Rows whose counters are not written yet. */
  pending: Map<string, ApiKeyRow>
  timer: NodeJS.Timeout | null
  flushAll: (rows: ApiKeyRow[]) => void
}

const prepared = new WeakMap<DB, Prepared>()

function prep(ctx: AuthContext): Prepared {
  let p = prepared.get(ctx.db)
  if (!p) {
    p = {
      cache: new KeyCache(ctx.sqlite),
      byHash: ctx.db
        .select()
        .from(apikey)
        .where(eq(apikey.key, sql.placeholder('key')))
        .prepare(),
      owner: ctx.db
        .select()
        .from(user)
        .where(eq(user.id, sql.placeholder('id')))
        .prepare(),
      owners: new ChangeGuardedCache(ctx.sqlite),
      usage: ctx.sqlite.prepare(
        'update apikey set remaining = ?, lastRefillAt = ?, requestCount = ?, lastRequest = ?, updatedAt = ? where id = ?',
      ),
      pending: new Map(),
      timer: null,
      flushAll: () => {},
    }
    const stmt = p.usage
    p.flushAll = ctx.sqlite.transaction((rows: ApiKeyRow[]) => {
      for (const row of rows) runUsage(stmt, row, row)
    })
    prepared.set(ctx.db, p)
  }
  return p
}

const ms = (d: Date | null) => (d ? d.getTime() : null)
function runUsage(stmt: Database.Statement, row: ApiKeyRow, usage: UsageWrite): void {
  stmt.run(usage.remaining, ms(usage.lastRefillAt), usage.requestCount, ms(usage.lastRequest), ms(usage.updatedAt), row.id)
}

/** Writes the counters kept in memory (one transaction). */
export function flushUsage(ctx: AuthContext): void {
  const p = prep(ctx)
  if (p.timer) {
    clearTimeout(p.timer)
    p.timer = null
  }
  if (p.pending.size === 0) return
  const rows = [...p.pending.values()]
  p.pending.clear()
  p.flushAll(rows)
}

/** Empties the verification cache (any change to a key), after writing pending counters. */
export function invalidateKeyCache(ctx: AuthContext): void {
  flushUsage(ctx)
  prep(ctx).cache.rows.clear()
}

/** The row of a key hash, from the cache when it holds it. */
export function findKeyByHash(ctx: AuthContext, hash: string): ApiKeyRow | undefined {
  const p = prep(ctx)
  const rows = p.cache.fresh(() => flushUsage(ctx))
  let row = rows.get(hash)
  if (row) return row
  row = p.byHash.get({ key: hash })
  if (row) {
    if (rows.size >= 10_000) rows.clear()
    rows.set(hash, row)
  }
  return row
}

/**
 * A key owner's user row, read on every request a key acts as its owner: prepared once and
 * cached until the database changes at all (a ban or a role change is seen at once).
 */
export function findOwner(ctx: AuthContext, id: string): typeof user.$inferSelect | undefined {
  const p = prep(ctx)
  let row = p.owners.get(id)
  if (row) return row
  row = p.owner.get({ id })
  if (row) p.owners.set(id, row)
  return row
}

export interface UsageWrite {
  remaining: number | null
  lastRefillAt: Date | null
  requestCount: number
  lastRequest: Date | null
  updatedAt: Date
}

/**
 * Applies a verification's counters to the cached row and writes them: at once for a key with a
 * quota, within a second otherwise. Synchronous: no other verification runs between the
 * caller's decision and this update, so counting is atomic.
 */
export function writeUsage(ctx: AuthContext, row: ApiKeyRow, usage: UsageWrite): void {
  const p = prep(ctx)
  Object.assign(row, usage)
  if (usage.remaining !== null) {
    p.pending.delete(row.id)
    runUsage(p.usage, row, usage)
    return
  }
  p.pending.set(row.id, row)
  if (!p.timer) {
    p.timer = setTimeout(() => flushUsage(ctx), 1000)
    p.timer.unref()
  }
}

export function insertKey(ctx: AuthContext, row: ApiKeyRow): ApiKeyRow {
  ctx.db.insert(apikey).values(row).run()
  invalidateKeyCache(ctx)
  return row
}

export function findKeyById(ctx: AuthContext, id: string): ApiKeyRow | undefined {
  flushUsage(ctx)
  return ctx.db.select().from(apikey).where(eq(apikey.id, id)).get()
}

export function updateKeyRow(ctx: AuthContext, id: string, values: Partial<ApiKeyRow>): ApiKeyRow | undefined {
  invalidateKeyCache(ctx)
  return ctx.db.update(apikey).set(values).where(eq(apikey.id, id)).returning().get()
}

export function deleteKeyRow(ctx: AuthContext, id: string): boolean {
  invalidateKeyCache(ctx)
  return ctx.db.delete(apikey).where(eq(apikey.id, id)).run().changes > 0
}

export function deleteExpiredKeys(ctx: AuthContext, now: number): number {
  flushUsage(ctx)
  const changes = ctx.db
    .delete(apikey)
    .where(and(isNotNull(apikey.expiresAt), lt(apikey.expiresAt, new Date(now))))
    .run().changes
  if (changes > 0) invalidateKeyCache(ctx)
  return changes
}

const SORTABLE = {
  createdAt: apikey.createdAt,
  updatedAt: apikey.updatedAt,
  name: apikey.name,
  expiresAt: apikey.expiresAt,
  lastRequest: apikey.lastRequest,
  remaining: apikey.remaining,
  enabled: apikey.enabled,
} as const

export function listKeysByReference(
  ctx: AuthContext,
  referenceId: string,
  options: { sortBy?: string; sortDirection?: 'asc' | 'desc'; limit?: number; offset?: number },
): { rows: ApiKeyRow[]; total: number } {
  flushUsage(ctx)
  const where = eq(apikey.referenceId, referenceId)
  const column = options.sortBy && Object.hasOwn(SORTABLE, options.sortBy) ? SORTABLE[options.sortBy as keyof typeof SORTABLE] : undefined
  let q = ctx.db.select().from(apikey).where(where).$dynamic()
  if (column) q = q.orderBy(options.sortDirection === 'desc' ? desc(column) : asc(column))
  else q = q.orderBy(asc(apikey.createdAt))
  // An owner has few keys: page in memory (drizzle drops a LIMIT of -1, and OFFSET needs one).
  const all = q.all()
  const start = options.offset ?? 0
  const rows = all.slice(start, options.limit === undefined ? undefined : start + options.limit)
  return { rows, total: all.length }
}

export interface KeyWithOwner {
  row: ApiKeyRow
  ownerEmail: string | null
  ownerName: string | null
}

/** Every key, newest first, optionally only those whose owner's email, name or id, or the key's name, contains `search`. */
export function listAllKeys(
  ctx: AuthContext,
  options: { userId?: string; search?: string; limit: number; offset: number },
): { keys: KeyWithOwner[]; total: number } {
  flushUsage(ctx)
  const term = options.search?.trim()
  const pattern = term ? `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined
  const owner = options.userId ? eq(apikey.referenceId, options.userId) : undefined
  const matching = pattern
    ? or(
        sql`${user.email} like ${pattern} escape '\\'`,
        sql`${user.name} like ${pattern} escape '\\'`,
        like(apikey.referenceId, pattern),
        sql`${apikey.name} like ${pattern} escape '\\'`,
      )
    : undefined
  const where = owner && matching ? and(owner, matching) : (owner ?? matching)
  const rows = ctx.db
    .select({ row: apikey, ownerEmail: user.email, ownerName: user.name })
    .from(apikey)
    .leftJoin(user, eq(user.id, apikey.referenceId))
    .where(where)
    .orderBy(desc(apikey.createdAt))
    .limit(options.limit)
    .offset(options.offset)
    .all()
  const total =
    ctx.db.select({ n: count() }).from(apikey).leftJoin(user, eq(user.id, apikey.referenceId)).where(where).get()?.n ?? 0
  return { keys: rows, total }
}

/** The caller's membership row in an organization (organization-owned keys). */
export function findMembership(ctx: AuthContext, userId: string, organizationId: string): { role: string } | undefined {
  return ctx.db
    .select({ role: member.role })
    .from(member)
    .where(and(eq(member.userId, userId), eq(member.organizationId, organizationId)))
    .get()
}
