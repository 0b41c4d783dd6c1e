import { and, desc, eq, gt, inArray } from 'drizzle-orm'
import { HashQueueFullError, hashSource, passwordHashQueue } from '../crypto/hash-queue.js'
import { burnPasswordCheck, type PasswordCheck, verifySignInPassword } from '../crypto/password.js'
import { loginThrottle } from '../db/schema.js'
import { firstRow } from '../db/storage.js'
import { recordAudit } from './audit.js'
import type { AuthContext, RequestMeta } from './context.js'
import { rateLimitIdentity } from './rate-limit.js'
import { APIError, ERR } from './errors.js'

/**
 * Per-account throttling of password checks (OWASP ASVS 2.2.1): at most `maxFailures` failed
 * checks per identifier within `window` seconds, then the identifier is locked for
 * `lockDuration` seconds. Identifiers that do not exist are counted the same way, and a locked
 * identifier answers like the rate limiter (429 + X-Retry-After), so the answer never tells
 * whether an account exists.
 *
 * An attempt is counted *before* the password is checked, in one transaction (read and write
 * together, transactions serialised), so parallel guesses cannot slip past the threshold while
 * their hashes are being computed; a successful check then clears the count.
 */
export type ThrottleKind = 'email' | 'username' | 'user'

export const throttleKey = (kind: ThrottleKind, identifier: string): string => `${kind}:${identifier.trim().toLowerCase()}`

/** The key second-factor code checks of a user are counted under (ids are case-sensitive: not lower-cased). */
export const secondFactorThrottleKey = (userId: string): string => `two-factor:${userId}`

function locked(retryAfterMs: number, ctx: AuthContext): APIError {
  ctx.events.refused('lockout')
  const retry = String(Math.max(1, Math.ceil(retryAfterMs / 1000)))
  return new APIError(429, 'TOO_MANY_REQUESTS', ERR.TOO_MANY_REQUESTS, { 'x-retry-after': retry, 'retry-after': retry })
}

/** Counts one password check for `key`, or throws 429 if the key is locked. */
export async function reservePasswordAttempt(ctx: AuthContext, key: string): Promise<void> {
  const conf = ctx.config().security.accountLockout
  if (!conf.enabled) return
  const now = ctx.clock.now()
  await ctx.storage.transaction(async () => {
    const row = await firstRow(ctx.db.select().from(loginThrottle).where(eq(loginThrottle.key, key)))
    if (row?.lockedUntil && row.lockedUntil > now) throw locked(row.lockedUntil - now, ctx)
    const fresh = !row || now - row.windowStart >= conf.window * 1000 || (row.lockedUntil !== null && row.lockedUntil <= now)
    const failures = fresh ? 0 : row.failures
    // The limit is reached by checks still in flight: refuse this one for a moment. Only checks
    // that really failed lock the key (recordPasswordFailure), so a burst of correct sign-ins
    // (many devices at once) never locks an account.
    if (failures >= conf.maxFailures) throw locked(1000, ctx)
    await ctx.db
      .insert(loginThrottle)
      .values({ key, failures: failures + 1, windowStart: fresh ? now : (row?.windowStart ?? now), lockedUntil: null })
      .onConflictDoUpdate({
        target: loginThrottle.key,
        set: { failures: failures + 1, windowStart: fresh ? now : (row?.windowStart ?? now), lockedUntil: null },
      })
  })
}

/**
 * Throws the lock's 429 when any of `keys` is locked right now: the sign-in pipeline's check, so
 * an account locked by password or code guesses is locked for every way in, not only the one guessed.
 */
export async function accountLockedFor(ctx: AuthContext, keys: string[]): Promise<void> {
  if (!ctx.config().security.accountLockout.enabled) return
  const now = ctx.clock.now()
  const row = await firstRow(
    ctx.db
      .select({ lockedUntil: loginThrottle.lockedUntil })
      .from(loginThrottle)
      .where(and(inArray(loginThrottle.key, keys), gt(loginThrottle.lockedUntil, now)))
      .orderBy(desc(loginThrottle.lockedUntil)),
  )
  if (row?.lockedUntil) throw locked(row.lockedUntil - now, ctx)
}

/** The check failed: the reserved attempt stays counted; a failure that reaches the limit locks the key. */
export async function recordPasswordFailure(
  ctx: AuthContext,
  key: string,
  meta: RequestMeta | null,
  targetUserId?: string | null,
): Promise<void> {
  const conf = ctx.config().security.accountLockout
  if (!conf.enabled) return
  const lockedUntil = ctx.clock.now() + conf.lockDuration * 1000
  // Read and lock together, so of two failures reaching the limit at once only one locks and audits.
  const row = await ctx.storage.transaction(async () => {
    const current = await firstRow(ctx.db.select().from(loginThrottle).where(eq(loginThrottle.key, key)))
    if (!current || current.failures < conf.maxFailures || current.lockedUntil) return undefined
    await ctx.db.update(loginThrottle).set({ lockedUntil }).where(eq(loginThrottle.key, key))
    return current
  })
  if (!row) return
  await recordAudit(ctx, {
    type: 'security.account-locked',
    outcome: 'failure',
    targetUserId: targetUserId ?? null,
    target: key,
    detail: { failures: row.failures, lockedUntil: new Date(lockedUntil).toISOString() },
    meta,
  })
}

/** The check succeeded: the count starts over. */
export async function clearPasswordFailures(ctx: AuthContext, key: string): Promise<void> {
  if (!ctx.config().security.accountLockout.enabled) return
  await ctx.db.delete(loginThrottle).where(eq(loginThrottle.key, key))
}

export interface AccountLock {
  key: string
  failures: number
  lockedUntil: Date
}

/** Identifiers locked right now (for the control panel). */
export async function listAccountLocks(ctx: AuthContext): Promise<AccountLock[]> {
  const rows = await ctx.db
    .select()
    .from(loginThrottle)
    .where(gt(loginThrottle.lockedUntil, ctx.clock.now()))
    .orderBy(desc(loginThrottle.lockedUntil))
  return rows.map((row) => ({ key: row.key, failures: row.failures, lockedUntil: new Date(row.lockedUntil ?? 0) }))
}

/** An administrator lifts a lock. Returns whether there was one. */
export async function clearAccountLock(
  ctx: AuthContext,
  key: string,
  actorUserId: string | null,
  meta: RequestMeta | null,
  targetUserId: string | null = null,
): Promise<boolean> {
  const removed = await ctx.db.delete(loginThrottle).where(eq(loginThrottle.key, key)).returning({ key: loginThrottle.key })
  if (removed.length > 0) await recordAudit(ctx, { type: 'security.account-unlocked', actorUserId, targetUserId, target: key, meta })
  return removed.length > 0
}

/**
 * Runs one password check under the throttle: reserve, check, then record the failure or (unless
 * the caller clears it inside its own transaction, saving a commit) clear the count on success.
 * The check's hashes are counted to the source `meta` names (its share of the hash queue).
 * `check` resolves to true when the password matched.
 */
export async function throttledPasswordCheck(
  ctx: AuthContext,
  key: string,
  meta: RequestMeta | null,
  check: () => Promise<boolean>,
  options: { targetUserId?: string | null; clearOnSuccess?: boolean } = {},
): Promise<boolean> {
  // The hashes of this check count towards its source's share of the password-hash queue
  // (crypto/hash-queue.ts): a flood from one address never fills it for everyone else. Past its
  // share (or with the queue full) it is refused here, before the reservation is written: a flood
  // past its share costs no commit, and no account counts an attempt whose password was not checked.
  const source = meta?.ipAddress ? rateLimitIdentity(meta.ipAddress) : null
  if (passwordHashQueue.refuses(source ?? undefined)) throw new HashQueueFullError()
  await reservePasswordAttempt(ctx, key)
  const ok = source !== null ? await hashSource.run(source, check) : await check()
  if (!ok) await recordPasswordFailure(ctx, key, meta, options.targetUserId)
  else if (options.clearOnSuccess !== false) await clearPasswordFailures(ctx, key)
  return ok
}

/**
 * A sign-in's password check under the throttle: verifies against the stored hash, or, when the
 * identity has none (unknown user, no credential account), spends the same work and fails, so
 * the answer and its timing reveal nothing. The stored hash may be an imported foreign one
 * (`rehash`: the caller replaces it with scrypt once the sign-in succeeds).
 */
export async function throttledCredentialCheck(
  ctx: AuthContext,
  key: string,
  meta: RequestMeta | null,
  storedHash: string | null | undefined,
  password: string,
  options: { targetUserId?: string | null; clearOnSuccess?: boolean } = {},
): Promise<PasswordCheck> {
  let rehash = false
  const ok = await throttledPasswordCheck(
    ctx,
    key,
    meta,
    async () => {
      if (!storedHash) {
        await burnPasswordCheck(password)
        return false
      }
      const check = await verifySignInPassword(storedHash, password)
      rehash = check.rehash
      return check.ok
    },
    options,
  )
  return { ok, rehash }
}
