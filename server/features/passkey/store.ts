import { and, asc, eq } from 'drizzle-orm'
import type { AuthContext } from '../../auth/context.js'
import { generateId } from '../../crypto/random.js'
import { passkey } from '../../db/schema.js'
import type { PasskeyRow } from './schema.js'

/** Every SQL statement of the passkey feature. */

export function listPasskeys(ctx: AuthContext, userId: string): PasskeyRow[] {
  return ctx.db.select().from(passkey).where(eq(passkey.userId, userId)).orderBy(asc(passkey.createdAt)).all()
}

export function findPasskey(ctx: AuthContext, id: string): PasskeyRow | undefined {
  return ctx.db.select().from(passkey).where(eq(passkey.id, id)).get()
}

export function findPasskeyByCredential(ctx: AuthContext, credentialID: string): PasskeyRow | undefined {
  return ctx.db.select().from(passkey).where(eq(passkey.credentialID, credentialID)).get()
}

export function insertPasskey(ctx: AuthContext, values: Omit<PasskeyRow, 'id'>): PasskeyRow {
  const row = { id: generateId(), ...values }
  ctx.db.insert(passkey).values(row).run()
  return row
}

/**
 * Stores the counter and backup state of a use, only if the stored counter is still the one the
 * check was made against: of two parallel uses of one signature only one passes.
 */
export function recordPasskeyUse(ctx: AuthContext, id: string, expectedCounter: number, next: { counter: number; backedUp: boolean; deviceType: string }): boolean {
  return ctx.db.update(passkey).set(next).where(and(eq(passkey.id, id), eq(passkey.counter, expectedCounter))).run().changes === 1
}

export function renamePasskey(ctx: AuthContext, id: string, name: string): PasskeyRow | undefined {
  return ctx.db.update(passkey).set({ name }).where(eq(passkey.id, id)).returning().get()
}

export function deletePasskey(ctx: AuthContext, id: string): boolean {
  return ctx.db.delete(passkey).where(eq(passkey.id, id)).run().changes === 1
}
