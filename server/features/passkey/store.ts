import { and, asc, eq } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { generateId } from '../../crypto/random.js'
import { passkey } from '../../db/schema.js'
import type { PasskeyRow } from './schema.js'
import { firstRow } from '../../db/storage.js'

/** Every SQL statement of the passkey feature. */

export async function listPasskeys(ctx: AuthContext, userId: string): Promise<PasskeyRow[]> {
  return await ctx.db.select().from(passkey).where(eq(passkey.userId, userId)).orderBy(asc(passkey.createdAt))
}

export async function findPasskey(ctx: AuthContext, id: string): Promise<PasskeyRow | undefined> {
  return await firstRow(ctx.db.select().from(passkey).where(eq(passkey.id, id)))
}

export async function findPasskeyByCredential(ctx: AuthContext, credentialID: string): Promise<PasskeyRow | undefined> {
  return await firstRow(ctx.db.select().from(passkey).where(eq(passkey.credentialID, credentialID)))
}

export async function insertPasskey(ctx: AuthContext, values: Omit<PasskeyRow, 'id'>): Promise<PasskeyRow> {
  const row = { id: generateId(), ...values }
  await ctx.db.insert(passkey).values(row)
  return row
}

/**
 * Stores the counter and backup state of a use, only if the stored counter is still the one the
 * check was made against: of two parallel uses of one signature only one passes.
 */
export async function recordPasskeyUse(
  ctx: AuthContext,
  id: string,
  expectedCounter: number,
  next: { counter: number; backedUp: boolean; deviceType: string },
): Promise<boolean> {
  return (
    (
      await ctx.db
        .update(passkey)
        .set(next)
        .where(and(eq(passkey.id, id), eq(passkey.counter, expectedCounter)))
        .returning()
    ).length === 1
  )
}

export async function renamePasskey(ctx: AuthContext, id: string, name: string): Promise<PasskeyRow | undefined> {
  return await firstRow(ctx.db.update(passkey).set({ name }).where(eq(passkey.id, id)).returning())
}

export async function deletePasskey(ctx: AuthContext, id: string): Promise<boolean> {
  return (await ctx.db.delete(passkey).where(eq(passkey.id, id)).returning()).length === 1
}
