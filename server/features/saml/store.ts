import { and, asc, count, eq, gt, inArray, isNull, lt } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { samlKey, samlParticipant, samlRequest, samlServiceProvider } from '../../db/schema.js'
import { firstRow, isUniqueViolation } from '../../db/storage.js'
import type { SamlKeyRow, SamlParticipantRow, SamlRequestRow, SamlServiceProviderRow } from './schema.js'

/** Every SQL statement of the SAML feature. */

export async function allKeys(ctx: AuthContext): Promise<SamlKeyRow[]> {
  return await ctx.db.select().from(samlKey).orderBy(asc(samlKey.createdAt))
}

export async function insertKey(ctx: AuthContext, row: SamlKeyRow): Promise<void> {
  await ctx.db.insert(samlKey).values(row)
}

export async function activateKey(ctx: AuthContext, id: string, at: Date): Promise<void> {
  await ctx.db.update(samlKey).set({ activatesAt: at }).where(eq(samlKey.id, id))
}

export async function retireKeys(ctx: AuthContext, ids: string[], at: Date): Promise<void> {
  if (ids.length)
    await ctx.db
      .update(samlKey)
      .set({ retiredAt: at })
      .where(and(inArray(samlKey.id, ids), isNull(samlKey.retiredAt)))
}

export async function listServiceProviders(ctx: AuthContext): Promise<SamlServiceProviderRow[]> {
  return await ctx.db.select().from(samlServiceProvider).orderBy(asc(samlServiceProvider.createdAt))
}

export async function findServiceProvider(
  ctx: AuthContext,
  by: { id?: string; entityId?: string },
): Promise<SamlServiceProviderRow | null> {
  const where = by.id !== undefined ? eq(samlServiceProvider.id, by.id) : eq(samlServiceProvider.entityId, by.entityId ?? '')
  return (await firstRow(ctx.db.select().from(samlServiceProvider).where(where).limit(1))) ?? null
}

/** Inserts; false when the entityID is taken. */
export async function insertServiceProvider(ctx: AuthContext, row: SamlServiceProviderRow): Promise<boolean> {
  try {
    await ctx.db.insert(samlServiceProvider).values(row)
    return true
  } catch (error) {
    if (isUniqueViolation(error, 'samlServiceProvider.entityId')) return false
    throw error
  }
}

export async function updateServiceProvider(
  ctx: AuthContext,
  id: string,
  patch: Partial<SamlServiceProviderRow>,
): Promise<SamlServiceProviderRow | null> {
  try {
    return (await ctx.db.update(samlServiceProvider).set(patch).where(eq(samlServiceProvider.id, id)).returning())[0] ?? null
  } catch (error) {
    if (isUniqueViolation(error, 'samlServiceProvider.entityId')) throw Object.assign(new Error('entityId taken'), { clash: true })
    throw error
  }
}

export async function deleteServiceProvider(ctx: AuthContext, id: string): Promise<boolean> {
  return (
    (await ctx.db.delete(samlServiceProvider).where(eq(samlServiceProvider.id, id)).returning({ id: samlServiceProvider.id })).length > 0
  )
}

/** Records a received request; false when this SP already sent a request with this ID (a replay). */
export async function insertRequest(ctx: AuthContext, row: SamlRequestRow): Promise<boolean> {
  try {
    await ctx.db.insert(samlRequest).values(row)
    return true
  } catch (error) {
    if (isUniqueViolation(error)) return false
    throw error
  }
}

export async function findRequest(ctx: AuthContext, id: string): Promise<SamlRequestRow | null> {
  return (await firstRow(ctx.db.select().from(samlRequest).where(eq(samlRequest.id, id)).limit(1))) ?? null
}

/** Marks a request answered; false when it already was (two tabs, a reload). */
export async function spendRequest(ctx: AuthContext, id: string, at: Date): Promise<boolean> {
  const rows = await ctx.db
    .update(samlRequest)
    .set({ usedAt: at })
    .where(and(eq(samlRequest.id, id), isNull(samlRequest.usedAt)))
    .returning({ id: samlRequest.id })
  return rows.length > 0
}

/** Removes the requests that expired before `before`; how many. */
export async function deleteExpiredRequests(ctx: AuthContext, before: Date): Promise<number> {
  return (await ctx.db.delete(samlRequest).where(lt(samlRequest.expiresAt, before)).returning({ id: samlRequest.id })).length
}

/** How many requests from `source` still wait for a sign-in (neither answered nor expired at `now`). */
export async function countPendingRequests(ctx: AuthContext, source: string, now: Date): Promise<number> {
  const row = await firstRow(
    ctx.db
      .select({ n: count() })
      .from(samlRequest)
      .where(and(eq(samlRequest.source, source), isNull(samlRequest.usedAt), gt(samlRequest.expiresAt, now))),
  )
  return Number(row?.n ?? 0)
}

export async function insertParticipant(ctx: AuthContext, row: SamlParticipantRow): Promise<void> {
  await ctx.db.insert(samlParticipant).values(row)
}

export async function participantsOfSession(ctx: AuthContext, sessionId: string): Promise<SamlParticipantRow[]> {
  return await ctx.db.select().from(samlParticipant).where(eq(samlParticipant.sessionId, sessionId)).orderBy(asc(samlParticipant.createdAt))
}

export async function participantsBySessionIndex(ctx: AuthContext, sessionIndex: string): Promise<SamlParticipantRow[]> {
  return await ctx.db.select().from(samlParticipant).where(eq(samlParticipant.sessionIndex, sessionIndex))
}

/** A LogoutRequest without SessionIndex: every session this SP holds for the NameID. */
export async function participantsByNameId(ctx: AuthContext, spEntityId: string, nameId: string): Promise<SamlParticipantRow[]> {
  return await ctx.db
    .select()
    .from(samlParticipant)
    .where(and(eq(samlParticipant.spEntityId, spEntityId), eq(samlParticipant.nameId, nameId)))
}

/**
 * Marks a participant's remaining LogoutRequests as sent without SessionIndex (continueLogout: the
 * person holds more than one session at that SP).
 */
export async function forgetSessionIndex(ctx: AuthContext, id: string): Promise<void> {
  await ctx.db.update(samlParticipant).set({ sessionIndex: '' }).where(eq(samlParticipant.id, id))
}

export async function deleteParticipants(ctx: AuthContext, ids: string[]): Promise<void> {
  if (ids.length) await ctx.db.delete(samlParticipant).where(inArray(samlParticipant.id, ids))
}
