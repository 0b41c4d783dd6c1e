import { and, count, eq, gt, inArray, like, lte, sql } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { generateId } from '../../crypto/random.js'
import { passkey, twoFactor, twoFactorSession, user, verification } from '../../db/schema.js'
import type { TwoFactorRow } from './schema.js'
import { firstRow } from '../../db/storage.js'

/** Every SQL statement of the two-factor feature (async: the storage port). A read and the write that depends on it go in one `ctx.storage.transaction`, or are one conditional statement. */

export async function findTwoFactor(ctx: AuthContext, userId: string): Promise<TwoFactorRow | undefined> {
  return await firstRow(ctx.db.select().from(twoFactor).where(eq(twoFactor.userId, userId)))
}

export async function upsertTwoFactor(
  ctx: AuthContext,
  userId: string,
  values: { secret: string; backupCodes: string; verified: boolean },
): Promise<void> {
  const existing = await findTwoFactor(ctx, userId)
  if (existing) await ctx.db.update(twoFactor).set(values).where(eq(twoFactor.id, existing.id))
  else await ctx.db.insert(twoFactor).values({ id: generateId(), userId, ...values, failedVerificationCount: 0 })
}

export async function markTwoFactorVerified(ctx: AuthContext, id: string): Promise<void> {
  await ctx.db.update(twoFactor).set({ verified: true }).where(eq(twoFactor.id, id))
}

/** Replaces the backup codes only if they are still `expected` (a code is spent once, even by parallel requests). */
export async function swapBackupCodes(ctx: AuthContext, id: string, expected: string, next: string): Promise<boolean> {
  return (
    (
      await ctx.db
        .update(twoFactor)
        .set({ backupCodes: next })
        .where(and(eq(twoFactor.id, id), eq(twoFactor.backupCodes, expected)))
        .returning()
    ).length === 1
  )
}

export async function setBackupCodes(ctx: AuthContext, id: string, sealed: string): Promise<void> {
  await ctx.db.update(twoFactor).set({ backupCodes: sealed }).where(eq(twoFactor.id, id))
}

export async function deleteTwoFactor(ctx: AuthContext, userId: string): Promise<number> {
  return (await ctx.db.delete(twoFactor).where(eq(twoFactor.userId, userId)).returning()).length
}

export async function setTwoFactorEnabled(ctx: AuthContext, userId: string, enabled: boolean): Promise<void> {
  await ctx.db
    .update(user)
    .set({ twoFactorEnabled: enabled, updatedAt: new Date(ctx.clock.now()) })
    .where(eq(user.id, userId))
}

/** Records that a session passed a second factor (its sign-in went through the second step, or a trusted device). */
export async function markSessionSecondFactor(ctx: AuthContext, sessionId: string, method: string): Promise<void> {
  await ctx.db
    .insert(twoFactorSession)
    .values({ sessionId, method, createdAt: new Date(ctx.clock.now()) })
    .onConflictDoNothing()
}

/**
 * Whether a session passed a second factor (forward auth's `two-factor` policy asks). The marker
 * goes with the session (cascade), so a signed-out or revoked session never answers true.
 */
export async function sessionPassedSecondFactor(ctx: AuthContext, sessionId: string): Promise<boolean> {
  return (
    (await firstRow(
      ctx.db.select({ id: twoFactorSession.sessionId }).from(twoFactorSession).where(eq(twoFactorSession.sessionId, sessionId)),
    )) !== undefined
  )
}

// ---------------------------------------------------------------------------------------------
// Verification records: challenges (`2fa-…`), attempt counters, mailed codes, trusted devices.

export async function putVerification(ctx: AuthContext, identifier: string, value: string, expiresAt: number): Promise<void> {
  const now = new Date(ctx.clock.now())
  await ctx.db
    .insert(verification)
    .values({ id: generateId(), identifier, value, expiresAt: new Date(expiresAt), createdAt: now, updatedAt: now })
}

/** The unexpired record of an identifier (newest), without deleting it. */
export async function readVerification(ctx: AuthContext, identifier: string) {
  const row = await firstRow(
    ctx.db.select().from(verification).where(eq(verification.identifier, identifier)).orderBy(sql`${verification.createdAt} desc`).limit(1),
  )
  return row && row.expiresAt.getTime() > ctx.clock.now() ? row : undefined
}

export async function setVerificationValue(ctx: AuthContext, identifier: string, value: string): Promise<void> {
  await ctx.db
    .update(verification)
    .set({ value, updatedAt: new Date(ctx.clock.now()) })
    .where(eq(verification.identifier, identifier))
}

export async function dropVerification(ctx: AuthContext, identifier: string): Promise<number> {
  return (await ctx.db.delete(verification).where(eq(verification.identifier, identifier)).returning()).length
}

/**
 * Reserves one attempt on a counter record (`value` = attempts so far): returns the new count, or
 * null when the record is gone or `limit` attempts were already made. One SQL statement.
 */
export async function reserveCounter(ctx: AuthContext, identifier: string, limit: number): Promise<number | null> {
  const row = await firstRow(
    ctx.db
      .update(verification)
      .set({ value: sql`CAST(CAST(${verification.value} AS INTEGER) + 1 AS TEXT)` })
      .where(
        and(
          eq(verification.identifier, identifier),
          sql`CAST(${verification.value} AS INTEGER) < ${limit}`,
          gt(verification.expiresAt, new Date(ctx.clock.now())),
        ),
      )
      .returning({ value: verification.value }),
  )
  return row ? Number(row.value) : null
}

/** Trusted-device records of a user (identifier `trust-device-…`, value = user id). */
export async function countTrustedDevices(ctx: AuthContext, userId: string): Promise<number> {
  return (
    (
      await firstRow(
        ctx.db
          .select({ n: count() })
          .from(verification)
          .where(
            and(
              like(verification.identifier, 'trust-device-%'),
              eq(verification.value, userId),
              gt(verification.expiresAt, new Date(ctx.clock.now())),
            ),
          ),
      )
    )?.n ?? 0
  )
}

/**
 * A trusted browser's details (Gatehouse): a record beside its trust record, named after it
 * (`2fa-trusted-<trust identifier>`), value = JSON `{userAgent, since}`, same expiry. The trust
 * record itself stays as better-auth writes it (value = user id).
 */
export const trustDetailsId = (trustIdentifier: string) => `2fa-trusted-${trustIdentifier}`

const ownTrust = (userId: string) => and(like(verification.identifier, 'trust-device-%'), eq(verification.value, userId))

/** A user's unexpired trust records with their details records' values (null: none, e.g. written before details were kept). */
export async function listTrustedDevices(
  ctx: AuthContext,
  userId: string,
): Promise<Array<{ id: string; identifier: string; createdAt: Date; expiresAt: Date; details: string | null }>> {
  const rows = await ctx.db
    .select({
      id: verification.id,
      identifier: verification.identifier,
      createdAt: verification.createdAt,
      expiresAt: verification.expiresAt,
    })
    .from(verification)
    .where(and(ownTrust(userId), gt(verification.expiresAt, new Date(ctx.clock.now()))))
    .orderBy(sql`${verification.createdAt} desc`)
  if (rows.length === 0) return []
  const details = await ctx.db
    .select({ identifier: verification.identifier, value: verification.value })
    .from(verification)
    .where(
      inArray(
        verification.identifier,
        rows.map((r) => trustDetailsId(r.identifier)),
      ),
    )
  const byId = new Map(details.map((d) => [d.identifier, d.value]))
  return rows.map((r) => ({ ...r, details: byId.get(trustDetailsId(r.identifier)) ?? null }))
}

/** Deletes one trust record of a user by its row id (another user's id matches nothing), with its details. Returns its identifier. */
export async function deleteTrustedDevice(ctx: AuthContext, userId: string, id: string): Promise<string | null> {
  return ctx.storage.transaction(async () => {
    const row = await firstRow(
      ctx.db
        .delete(verification)
        .where(and(eq(verification.id, id), ownTrust(userId)))
        .returning({ identifier: verification.identifier }),
    )
    if (!row) return null
    await ctx.db.delete(verification).where(eq(verification.identifier, trustDetailsId(row.identifier)))
    return row.identifier
  })
}

/** Deletes every trust record of a user, with their details records; returns how many trust records went. */
export async function deleteTrustedDevices(ctx: AuthContext, userId: string): Promise<number> {
  const gone = await ctx.db.delete(verification).where(ownTrust(userId)).returning({ identifier: verification.identifier })
  if (gone.length > 0) {
    await ctx.db.delete(verification).where(
      inArray(
        verification.identifier,
        gone.map((g) => trustDetailsId(g.identifier)),
      ),
    )
  }
  return gone.length
}

export async function deleteExpiredVerifications(ctx: AuthContext): Promise<void> {
  await ctx.db.delete(verification).where(lte(verification.expiresAt, new Date(ctx.clock.now())))
}

// ---------------------------------------------------------------------------------------------
// Overview and enforcement

export async function secondFactorCounts(
  ctx: AuthContext,
): Promise<{ users: number; withTotp: number; withPasskey: number; withAny: number }> {
  const hasKey = sql`EXISTS (SELECT 1 FROM ${passkey} WHERE ${passkey.userId} = ${user.id})`
  const totp = eq(user.twoFactorEnabled, true)
  const row = await firstRow(
    ctx.db
      .select({
        users: count(),
        withTotp: sql<number | null>`sum(CASE WHEN ${totp} THEN 1 ELSE 0 END)`,
        withPasskey: sql<number | null>`sum(CASE WHEN ${hasKey} THEN 1 ELSE 0 END)`,
        withAny: sql<number | null>`sum(CASE WHEN ${totp} OR ${hasKey} THEN 1 ELSE 0 END)`,
      })
      .from(user),
  )
  return {
    users: row?.users ?? 0,
    withTotp: Number(row?.withTotp ?? 0),
    withPasskey: Number(row?.withPasskey ?? 0),
    withAny: Number(row?.withAny ?? 0),
  }
}

export async function hasPasskey(ctx: AuthContext, userId: string): Promise<boolean> {
  return (await firstRow(ctx.db.select({ id: passkey.id }).from(passkey).where(eq(passkey.userId, userId)).limit(1))) !== undefined
}
