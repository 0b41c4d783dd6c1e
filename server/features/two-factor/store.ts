import { and, count, eq, like, lte, sql } from 'drizzle-orm'
import type { AuthContext } from '../../auth/context.js'
import { generateId } from '../../crypto/random.js'
import { passkey, twoFactor, user, verification } from '../../db/schema.js'
import type { TwoFactorRow } from './schema.js'

/** Every SQL statement of the two-factor feature. Synchronous (better-sqlite3): a read and the write that follows it cannot interleave with another request. */

export function findTwoFactor(ctx: AuthContext, userId: string): TwoFactorRow | undefined {
  return ctx.db.select().from(twoFactor).where(eq(twoFactor.userId, userId)).get()
}

export function upsertTwoFactor(ctx: AuthContext, userId: string, values: { secret: string; backupCodes: string; verified: boolean }): void {
  const existing = findTwoFactor(ctx, userId)
  if (existing) ctx.db.update(twoFactor).set(values).where(eq(twoFactor.id, existing.id)).run()
  else ctx.db.insert(twoFactor).values({ id: generateId(), userId, ...values, failedVerificationCount: 0 }).run()
}

export function markTwoFactorVerified(ctx: AuthContext, id: string): void {
  ctx.db.update(twoFactor).set({ verified: true }).where(eq(twoFactor.id, id)).run()
}

/** Replaces the backup codes only if they are still `expected` (a code is spent once, even by parallel requests). */
export function swapBackupCodes(ctx: AuthContext, id: string, expected: string, next: string): boolean {
  return ctx.db.update(twoFactor).set({ backupCodes: next }).where(and(eq(twoFactor.id, id), eq(twoFactor.backupCodes, expected))).run().changes === 1
}

export function setBackupCodes(ctx: AuthContext, id: string, sealed: string): void {
  ctx.db.update(twoFactor).set({ backupCodes: sealed }).where(eq(twoFactor.id, id)).run()
}

export function deleteTwoFactor(ctx: AuthContext, userId: string): number {
  return ctx.db.delete(twoFactor).where(eq(twoFactor.userId, userId)).run().changes
}

export function setTwoFactorEnabled(ctx: AuthContext, userId: string, enabled: boolean): void {
  ctx.db.update(user).set({ twoFactorEnabled: enabled, updatedAt: new Date(ctx.clock.now()) }).where(eq(user.id, userId)).run()
}

// ---------------------------------------------------------------------------------------------
// Verification records: challenges (`2fa-…`), attempt counters, mailed codes, trusted devices.

export function putVerification(ctx: AuthContext, identifier: string, value: string, expiresAt: number): void {
  const now = new Date(ctx.clock.now())
  ctx.db.insert(verification).values({ id: generateId(), identifier, value, expiresAt: new Date(expiresAt), createdAt: now, updatedAt: now }).run()
}

/** The unexpired record of an identifier (newest), without deleting it. */
export function readVerification(ctx: AuthContext, identifier: string) {
  const row = ctx.db.select().from(verification).where(eq(verification.identifier, identifier)).orderBy(sql`${verification.createdAt} desc`).limit(1).get()
  return row && row.expiresAt.getTime() > ctx.clock.now() ? row : undefined
}

export function setVerificationValue(ctx: AuthContext, identifier: string, value: string): void {
  ctx.db.update(verification).set({ value, updatedAt: new Date(ctx.clock.now()) }).where(eq(verification.identifier, identifier)).run()
}

export function dropVerification(ctx: AuthContext, identifier: string): number {
  return ctx.db.delete(verification).where(eq(verification.identifier, identifier)).run().changes
}

/**
 * Reserves one attempt on a counter record (`value` = attempts so far): returns the new count, or
 * null when the record is gone or `limit` attempts were already made. One SQL statement.
 */
export function reserveCounter(ctx: AuthContext, identifier: string, limit: number): number | null {
  const row = ctx.db
    .update(verification)
    .set({ value: sql`CAST(${verification.value} AS INTEGER) + 1` })
    .where(and(eq(verification.identifier, identifier), sql`CAST(${verification.value} AS INTEGER) < ${limit}`, sql`${verification.expiresAt} > ${ctx.clock.now()}`))
    .returning({ value: verification.value })
    .get()
  return row ? Number(row.value) : null
}

/** Trusted-device records of a user (identifier `trust-device-…`, value = user id). */
export function countTrustedDevices(ctx: AuthContext, userId: string): number {
  return (
    ctx.db
      .select({ n: count() })
      .from(verification)
      .where(and(like(verification.identifier, 'trust-device-%'), eq(verification.value, userId), sql`${verification.expiresAt} > ${ctx.clock.now()}`))
      .get()?.n ?? 0
  )
}

export function deleteTrustedDevices(ctx: AuthContext, userId: string): number {
  return ctx.db.delete(verification).where(and(like(verification.identifier, 'trust-device-%'), eq(verification.value, userId))).run().changes
}

export function deleteExpiredVerifications(ctx: AuthContext): void {
  ctx.db.delete(verification).where(lte(verification.expiresAt, new Date(ctx.clock.now()))).run()
}

// ---------------------------------------------------------------------------------------------
// Overview and enforcement

export function secondFactorCounts(ctx: AuthContext): { users: number; withTotp: number; withPasskey: number; withAny: number } {
  const row = ctx.sqlite
    .prepare(
      `SELECT count(*) AS users,
              sum(CASE WHEN u.twoFactorEnabled = 1 THEN 1 ELSE 0 END) AS withTotp,
              sum(CASE WHEN EXISTS (SELECT 1 FROM passkey p WHERE p.userId = u.id) THEN 1 ELSE 0 END) AS withPasskey,
              sum(CASE WHEN u.twoFactorEnabled = 1 OR EXISTS (SELECT 1 FROM passkey p WHERE p.userId = u.id) THEN 1 ELSE 0 END) AS withAny
         FROM user u`,
    )
    .get() as { users: number; withTotp: number | null; withPasskey: number | null; withAny: number | null }
  return { users: row.users, withTotp: row.withTotp ?? 0, withPasskey: row.withPasskey ?? 0, withAny: row.withAny ?? 0 }
}

export function hasPasskey(ctx: AuthContext, userId: string): boolean {
  return ctx.db.select({ id: passkey.id }).from(passkey).where(eq(passkey.userId, userId)).limit(1).get() !== undefined
}
