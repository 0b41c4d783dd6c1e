import { and, eq, isNull, lt } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { deviceCode } from '../../db/schema.js'
import { firstRow, isUniqueViolation } from '../../db/storage.js'
import type { DeviceCodeRow } from './schema.js'

/**
 * All of the device authorization feature's SQL. Every change of a request's state is one
 * conditional statement, so two instances (or two requests) racing on the same code cannot both
 * win: a claim needs the row still unclaimed, a decision needs it still pending, a poll needs the
 * last poll it read, and the exchange deletes the approved row and only the deleter gets it.
 */

/** Stores a new request; false when its device code or user code is taken (the caller draws again). */
export async function insertDeviceCode(ctx: AuthContext, row: DeviceCodeRow): Promise<boolean> {
  try {
    await ctx.db.insert(deviceCode).values(row)
    return true
  } catch (e) {
    if (isUniqueViolation(e, 'deviceCode.deviceCode') || isUniqueViolation(e, 'deviceCode.userCode')) return false
    throw e
  }
}

export function findByDeviceCode(ctx: AuthContext, code: string): Promise<DeviceCodeRow | undefined> {
  return firstRow(ctx.db.select().from(deviceCode).where(eq(deviceCode.deviceCode, code)).limit(1))
}

export function findByUserCode(ctx: AuthContext, code: string): Promise<DeviceCodeRow | undefined> {
  return firstRow(ctx.db.select().from(deviceCode).where(eq(deviceCode.userCode, code)).limit(1))
}

export function findById(ctx: AuthContext, id: string): Promise<DeviceCodeRow | undefined> {
  return firstRow(ctx.db.select().from(deviceCode).where(eq(deviceCode.id, id)).limit(1))
}

/**
 * Records a poll at `now` if nobody polled since the poll `row` shows (compare-and-set on
 * lastPolledAt): false means a concurrent poll got there first.
 */
export async function recordPoll(ctx: AuthContext, row: DeviceCodeRow, now: number): Promise<boolean> {
  const unchanged = row.lastPolledAt ? eq(deviceCode.lastPolledAt, row.lastPolledAt) : isNull(deviceCode.lastPolledAt)
  const updated = await ctx.db
    .update(deviceCode)
    .set({ lastPolledAt: new Date(now) })
    .where(and(eq(deviceCode.id, row.id), unchanged))
    .returning({ id: deviceCode.id })
  return updated.length === 1
}

export async function deleteDeviceCode(ctx: AuthContext, id: string): Promise<void> {
  await ctx.db.delete(deviceCode).where(eq(deviceCode.id, id))
}

/** GET /device by a signed-in person: the pending, unclaimed request becomes theirs to decide. */
export async function claimDeviceCode(ctx: AuthContext, id: string, userId: string): Promise<boolean> {
  const updated = await ctx.db
    .update(deviceCode)
    .set({ userId })
    .where(and(eq(deviceCode.id, id), eq(deviceCode.status, 'pending'), isNull(deviceCode.userId)))
    .returning({ id: deviceCode.id })
  return updated.length === 1
}

/** Approve or deny: only a pending request, only by the person who claimed it. */
export async function decideDeviceCode(ctx: AuthContext, id: string, userId: string, status: 'approved' | 'denied'): Promise<boolean> {
  const updated = await ctx.db
    .update(deviceCode)
    .set({ status })
    .where(and(eq(deviceCode.id, id), eq(deviceCode.status, 'pending'), eq(deviceCode.userId, userId)))
    .returning({ id: deviceCode.id })
  return updated.length === 1
}

/**
 * The exchange: deletes the approved request of this client and returns it. Of any number of
 * concurrent exchanges of one device code, on any number of instances, one deletes the row; the
 * others delete nothing (better-auth's `consumeOne`).
 */
export async function spendApprovedDeviceCode(ctx: AuthContext, id: string, clientId: string): Promise<DeviceCodeRow | undefined> {
  return firstRow(
    ctx.db
      .delete(deviceCode)
      .where(and(eq(deviceCode.id, id), eq(deviceCode.status, 'approved'), eq(deviceCode.clientId, clientId)))
      .returning(),
  )
}

/** Removes requests that expired before `before` (left behind by devices that stopped polling). */
export async function deleteExpiredDeviceCodes(ctx: AuthContext, before: number): Promise<void> {
  await ctx.db.delete(deviceCode).where(lt(deviceCode.expiresAt, new Date(before)))
}
