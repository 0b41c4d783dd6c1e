import { and, asc, count, desc, eq, isNotNull, like, lt, or, sql } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { ChangeGuardedCache } from '../../core/session-cache.js'
import type { DB } from '../../db/index.js'
import { type ChangeSignal, firstRow } from '../../db/storage.js'
import { apikey, user } from '../../db/schema.js'
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
  private checkedAt = Number.NEGATIVE_INFINITY

  /** `signal`: other processes' commits (the storage's change signal, own writes not counted). */
  constructor(private readonly signal: ChangeSignal) {}

  /** The cached rows; when another process committed, `flush` runs first and the cache starts empty. */
  async fresh(flush: () => Promise<void>): Promise<Map<string, ApiKeyRow>> {
    const now = performance.now()
    if (now - this.checkedAt >= 250) {
      this.checkedAt = now
      if (this.signal.changed()) {
        await flush()
        this.rows.clear()
      }
    }
    return this.rows
  }
}

interface Prepared {
  cache: KeyCache
  owners: ChangeGuardedCache<typeof user.$inferSelect>
  /** Rows whose counters are not written yet. */
  pending: Map<string, ApiKeyRow>
  timer: NodeJS.Timeout | null
}

const prepared = new WeakMap<DB, Prepared>()

function prep(ctx: AuthContext): Prepared {
  let p = prepared.get(ctx.db)
  if (!p) {
    p = {
      cache: new KeyCache(ctx.storage.changeSignal()),
      owners: new ChangeGuardedCache(ctx.storage.changeSignal({ ownWrites: true })),
      pending: new Map(),
      timer: null,
    }
    prepared.set(ctx.db, p)
  }
  return p
}

/** The apikey columns a use writes. */
const usageColumns = (usage: UsageWrite) => ({
  remaining: usage.remaining,
  lastRefillAt: usage.lastRefillAt,
  requestCount: usage.requestCount,
  lastRequest: usage.lastRequest,
  updatedAt: usage.updatedAt,
})

/** One key's counters written (joins the caller's transaction when there is one). */
async function writeUsageRow(ctx: AuthContext, id: string, usage: UsageWrite): Promise<void> {
  await ctx.db.update(apikey).set(usageColumns(usage)).where(eq(apikey.id, id))
}

/** Writes the counters kept in memory (one transaction through the storage port). */
export async function flushUsage(ctx: AuthContext): Promise<void> {
  const p = prep(ctx)
  if (p.timer) {
    clearTimeout(p.timer)
    p.timer = null
  }
  if (p.pending.size === 0) return
  const rows = [...p.pending.values()]
  p.pending.clear()
  await ctx.storage.transaction(async () => {
    for (const row of rows) await writeUsageRow(ctx, row.id, row)
  })
}

/** Empties the verification cache (any change to a key), after writing pending counters. */
export async function invalidateKeyCache(ctx: AuthContext): Promise<void> {
  await flushUsage(ctx)
  prep(ctx).cache.rows.clear()
}

/** The row of a key hash, from the cache when it holds it (a hit awaits no query). */
export async function findKeyByHash(ctx: AuthContext, hash: string): Promise<ApiKeyRow | undefined> {
  const row = await cachedKeyByHash(ctx, hash)
  if (row && row.remaining !== null) return await storedQuotaRow(ctx, row.id)
  return row
}

async function cachedKeyByHash(ctx: AuthContext, hash: string): Promise<ApiKeyRow | undefined> {
  const p = prep(ctx)
  const rows = await p.cache.fresh(async () => await flushUsage(ctx))
  let row = rows.get(hash)
  if (row) return row
  row = await firstRow(ctx.db.select().from(apikey).where(eq(apikey.key, hash)))
  if (row) {
    if (rows.size >= 10_000) rows.clear()
    // Another lookup of the same key may have filled the cache meanwhile: keep one row per key,
    // so counters applied to it in memory are never split over two objects.
    const again = rows.get(hash)
    if (again) return again
    rows.set(hash, row)
  }
  return row
}

/**
 * A key with a quota is decided on its stored row, read for each verification (its uses are
 * written at once anyway): the cached row may lag another instance's uses, and on PostgreSQL the
 * cache is emptied by any commit, this instance's own too, so two rows of one key could be counted
 * down side by side. `writeUsage` then writes the use only over the value it was decided on.
 */
async function storedQuotaRow(ctx: AuthContext, id: string): Promise<ApiKeyRow | undefined> {
  return await firstRow(ctx.db.select().from(apikey).where(eq(apikey.id, id)))
}

/**
 * A key owner's user row, read on every request a key acts as its owner: cached until the
 * database changes at all (a ban or a role change is seen at once).
 */
export async function findOwner(ctx: AuthContext, id: string): Promise<typeof user.$inferSelect | undefined> {
  const p = prep(ctx)
  if (p.owners.sync) await p.owners.sync()
  let row = p.owners.get(id)
  if (row) return row
  const mark = p.owners.mark()
  row = await firstRow(ctx.db.select().from(user).where(eq(user.id, id)))
  if (row) p.owners.set(id, row, mark)
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
 * Applies a verification's counters to the row and writes them: at once for a key with a quota,
 * within a second otherwise. The cached row is updated before the first await: no other
 * verification of this process runs between the caller's decision and this update.
 *
 * A key with a quota (its row read from storage for this verification) is written only over the
 * value the decision was made on (compare-and-set): another verification, of this instance or
 * another, may have counted a use since the read. false: nothing was counted; the caller decides
 * again from the stored row.
 */
export async function writeUsage(ctx: AuthContext, row: ApiKeyRow, usage: UsageWrite): Promise<boolean> {
  const p = prep(ctx)
  const decidedOn = row.remaining
  // Applied to the cached row before any await: the next verification of this key sees it.
  Object.assign(row, usage)
  if (usage.remaining !== null && decidedOn !== null) {
    p.pending.delete(row.id)
    const written = await ctx.db
      .update(apikey)
      .set(usageColumns(usage))
      .where(and(eq(apikey.id, row.id), eq(apikey.remaining, decidedOn)))
      .returning({ id: apikey.id })
    return written.length > 0
  }
  p.pending.set(row.id, row)
  if (!p.timer) {
    p.timer = setTimeout(() => void flushUsage(ctx).catch(() => {}), 1000)
    p.timer.unref()
  }
  return true
}

export async function insertKey(ctx: AuthContext, row: ApiKeyRow): Promise<ApiKeyRow> {
  await ctx.db.insert(apikey).values(row)
  await invalidateKeyCache(ctx)
  return row
}

export async function findKeyById(ctx: AuthContext, id: string): Promise<ApiKeyRow | undefined> {
  await flushUsage(ctx)
  return await firstRow(ctx.db.select().from(apikey).where(eq(apikey.id, id)))
}

export async function updateKeyRow(ctx: AuthContext, id: string, values: Partial<ApiKeyRow>): Promise<ApiKeyRow | undefined> {
  await invalidateKeyCache(ctx)
  return await firstRow(ctx.db.update(apikey).set(values).where(eq(apikey.id, id)).returning())
}

export async function deleteKeyRow(ctx: AuthContext, id: string): Promise<boolean> {
  await invalidateKeyCache(ctx)
  return (await ctx.db.delete(apikey).where(eq(apikey.id, id)).returning()).length > 0
}

export async function deleteExpiredKeys(ctx: AuthContext, now: number): Promise<number> {
  await flushUsage(ctx)
  const changes = (
    await ctx.db
      .delete(apikey)
      .where(and(isNotNull(apikey.expiresAt), lt(apikey.expiresAt, new Date(now))))
      .returning()
  ).length
  if (changes > 0) await invalidateKeyCache(ctx)
  return changes
}

/** The columns a list sorts by, read per call: the table binding holds the dialect's table only once bound. */
const sortable = () => ({
  createdAt: apikey.createdAt,
  updatedAt: apikey.updatedAt,
  name: apikey.name,
  expiresAt: apikey.expiresAt,
  lastRequest: apikey.lastRequest,
  remaining: apikey.remaining,
  enabled: apikey.enabled,
})

export async function listKeysByReference(
  ctx: AuthContext,
  referenceId: string,
  options: { sortBy?: string; sortDirection?: 'asc' | 'desc'; limit?: number; offset?: number },
): Promise<{ rows: ApiKeyRow[]; total: number }> {
  await flushUsage(ctx)
  const where = eq(apikey.referenceId, referenceId)
  const SORTABLE = sortable()
  const column = options.sortBy && Object.hasOwn(SORTABLE, options.sortBy) ? SORTABLE[options.sortBy as keyof typeof SORTABLE] : undefined
  let q = ctx.db.select().from(apikey).where(where).$dynamic()
  if (column) q = q.orderBy(options.sortDirection === 'desc' ? desc(column) : asc(column))
  else q = q.orderBy(asc(apikey.createdAt))
  // An owner has few keys: page in memory (drizzle drops a LIMIT of -1, and OFFSET needs one).
  const all = await q
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
export async function listAllKeys(
  ctx: AuthContext,
  options: { userId?: string; search?: string; limit: number; offset: number },
): Promise<{ keys: KeyWithOwner[]; total: number }> {
  await flushUsage(ctx)
  const term = options.search?.trim()
  const pattern = term ? `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined
  const owner = options.userId ? eq(apikey.referenceId, options.userId) : undefined
  const matching = pattern
    ? or(
        sql`lower(${user.email}) like lower(${pattern}) escape '\\'`,
        sql`lower(${user.name}) like lower(${pattern}) escape '\\'`,
        like(apikey.referenceId, pattern),
        sql`lower(${apikey.name}) like lower(${pattern}) escape '\\'`,
      )
    : undefined
  const where = owner && matching ? and(owner, matching) : (owner ?? matching)
  const rows = await ctx.db
    .select({ row: apikey, ownerEmail: user.email, ownerName: user.name })
    .from(apikey)
    .leftJoin(user, eq(user.id, apikey.referenceId))
    .where(where)
    .orderBy(desc(apikey.createdAt))
    .limit(options.limit)
    .offset(options.offset)
  const total =
    (await firstRow(ctx.db.select({ n: count() }).from(apikey).leftJoin(user, eq(user.id, apikey.referenceId)).where(where)))?.n ?? 0
  return { keys: rows, total }
}
