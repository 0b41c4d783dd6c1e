import { desc, eq, gt } from 'drizzle-orm'
import { burnPasswordCheck, verifyPassword } from '../crypto/password.js'
import { loginThrottle } from '../db/schema.js'
import { recordAudit } from './audit.js'
import type { AuthContext, RequestMeta } from './context.js'
import { APIError, ERR } from './errors.js'

/**
 * Per-account throttling of password checks (OWASP ASVS 2.2.1): at most `maxFailures` failed
 * checks per identifier within `window` seconds, then the identifier is locked for
 * `lockDuration` seconds. Identifiers that do not exist are counted the same way, and a locked
 * identifier answers like the rate limiter (429 + X-Retry-After), so the answer never tells
 * whether an account exists.
 *
 * An attempt is counted *before* the password is checked, in one synchronous SQLite step, so
 * parallel guesses cannot slip past the threshold while their hashes are being computed; a
 * successful check then clears the count.
 */
export type ThrottleKind = 'email' | 'username' | 'user'

export const throttleKey = (kind: ThrottleKind, identifier: string): string => `${kind}:${identifier.trim().toLowerCase()}`

function locked(retryAfterMs: number): APIError {
  const retry = String(Math.max(1, Math.ceil(retryAfterMs / 1000)))
  return new APIError(429, 'TOO_MANY_REQUESTS', ERR.TOO_MANY_REQUESTS, { 'x-retry-after': retry, 'retry-after': retry })
}

/** Counts one password check for `key`, or throws 429 if the key is locked. */
export function reservePasswordAttempt(ctx: AuthContext, key: string): void {
  const conf = ctx.config().security.accountLockout
  if (!conf.enabled) return
  const now = ctx.clock.now()
  ctx.db.transaction((tx) => {
    const row = tx.select().from(loginThrottle).where(eq(loginThrottle.key, key)).get()
    if (row?.lockedUntil && row.lockedUntil > now) throw locked(row.lockedUntil - now)
    const fresh = !row || now - row.windowStart >= conf.window * 1000 || (row.lockedUntil !== null && row.lockedUntil <= now)
    const failures = fresh ? 0 : row.failures
    // The limit is reached by checks still in flight: refuse this one for a moment. Only checks
    // that really failed lock the key (recordPasswordFailure), so a burst of correct sign-ins
    // (many devices at once) never locks an account.
    if (failures >= conf.maxFailures) throw locked(1000)
    tx.insert(loginThrottle)
      .values({ key, failures: failures + 1, windowStart: fresh ? now : (row?.windowStart ?? now), lockedUntil: null })
      .onConflictDoUpdate({
        target: loginThrottle.key,
        set: { failures: failures + 1, windowStart: fresh ? now : (row?.windowStart ?? now), lockedUntil: null },
      })
      .run()
  })
}

/** The check failed: the reserved attempt stays counted; a failure that reaches the limit locks the key. */
export function recordPasswordFailure(ctx: AuthContext, key: string, meta: RequestMeta | null, targetUserId?: string | null): void {
  const conf = ctx.config().security.accountLockout
  if (!conf.enabled) return
  const row = ctx.db.select().from(loginThrottle).where(eq(loginThrottle.key, key)).get()
  if (!row || row.failures < conf.maxFailures || row.lockedUntil) return
  const lockedUntil = ctx.clock.now() + conf.lockDuration * 1000
  ctx.db.update(loginThrottle).set({ lockedUntil }).where(eq(loginThrottle.key, key)).run()
  recordAudit(ctx, {
    type: 'security.account-locked',
    outcome: 'failure',
    targetUserId: targetUserId ?? null,
    target: key,
    detail: { failures: row.failures, lockedUntil: new Date(lockedUntil).toISOString() },
    meta,
  })
}

/** The check succeeded: the count starts over. */
export function clearPasswordFailures(ctx: AuthContext, key: string): void {
  if (!ctx.config().security.accountLockout.enabled) return
  ctx.db.delete(loginThrottle).where(eq(loginThrottle.key, key)).run()
}

export interface AccountLock {
  key: string
  failures: number
  lockedUntil: Date
}

/** Identifiers locked right now (for the control panel). */
export function listAccountLocks(ctx: AuthContext): AccountLock[] {
  return ctx.db
    .select()
    .from(loginThrottle)
    .where(gt(loginThrottle.lockedUntil, ctx.clock.now()))
    .orderBy(desc(loginThrottle.lockedUntil))
    .all()
    .map((row) => ({ key: row.key, failures: row.failures, lockedUntil: new Date(row.lockedUntil ?? 0) }))
}

/** An administrator lifts a lock. Returns whether there was one. */
export function clearAccountLock(ctx: AuthContext, key: string, actorUserId: string | null, meta: RequestMeta | null): boolean {
  const result = ctx.db.delete(loginThrottle).where(eq(loginThrottle.key, key)).run()
  if (result.changes > 0) recordAudit(ctx, { type: 'security.account-unlocked', actorUserId, targetUserId: null, target: key, meta })
  return result.changes > 0
}

/**
 * Runs one password check under the throttle: reserve, check, then record the failure or (unless
 * the caller clears it inside its own transaction, saving a commit) clear the count on success.
 * `check` resolves to true when the password matched.
 */
export async function throttledPasswordCheck(
  ctx: AuthContext,
  key: string,
  meta: RequestMeta | null,
  check: () => Promise<boolean>,
  options: { targetUserId?: string | null; clearOnSuccess?: boolean } = {},
): Promise<boolean> {
  reservePasswordAttempt(ctx, key)
  const ok = await check()
  if (!ok) recordPasswordFailure(ctx, key, meta, options.targetUserId)
  else if (options.clearOnSuccess !== false) clearPasswordFailures(ctx, key)
  return ok
}

/**
 * A sign-in's password check under the throttle: verifies against the stored hash, or, when the
 * identity has none (unknown user, no credential account), spends the same work and fails, so
 * the answer and its timing reveal nothing.
 */
export function throttledCredentialCheck(
  ctx: AuthContext,
  key: string,
  meta: RequestMeta | null,
  storedHash: string | null | undefined,
  password: string,
  options: { targetUserId?: string | null; clearOnSuccess?: boolean } = {},
): Promise<boolean> {
  return throttledPasswordCheck(
    ctx,
    key,
    meta,
    async () => {
      if (!storedHash) {
        await burnPasswordCheck(password)
        return false
      }
      return verifyPassword(storedHash, password)
    },
    options,
  )
}
