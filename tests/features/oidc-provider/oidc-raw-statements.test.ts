import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { and, eq } from 'drizzle-orm'
import { afterEach, describe, expect, it } from 'vitest'
import '../../../server/schema.js' // the tables, handed down to db/ as they load (as gatehouse.ts does first)
import type { AuthContext } from '../../../server/core/context.js'
import { type Database_, openDatabase } from '../../../server/db/index.js'
import { oidcModel } from '../../../server/db/schema.js'
import { ConsumedMeanwhile } from '../../../server/features/oidc-provider/batch.js'
import { applyModelWrites, findModel, findModelByUid, upsertModel } from '../../../server/features/oidc-provider/store.js'
import type { OidcModelRow } from '../../../server/features/oidc-provider/schema.js'

/**
 * On SQLite the token path's model statements run on better-sqlite3 directly
 * (server/features/oidc-provider/store.ts): what they store and read must be what drizzle's
 * statements (PostgreSQL's path, and every other query of these tables) store and read.
 */

const opened: Array<{ dir: string; database: Database_ }> = []
afterEach(() => {
  for (const { dir, database } of opened.splice(0)) {
    database.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

function open(): { database: Database_; ctx: AuthContext } {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-oidc-raw-'))
  const database = openDatabase(join(dir, 'gatehouse.db'))
  opened.push({ dir, database })
  const ctx = { db: database.storage.db, storage: database.storage } as unknown as AuthContext
  return { database, ctx }
}

const drizzleModel = (database: Database_, kind: string, id: string) =>
  database.storage.db
    .select()
    .from(oidcModel)
    .where(and(eq(oidcModel.kind, kind), eq(oidcModel.id, id)))
    .all()[0]

describe('raw SQLite statements of the token path', () => {
  it('a model is stored, read by id and by uid, replaced and consumed as drizzle would', async () => {
    const { database, ctx } = open()
    const row: OidcModelRow = {
      kind: 'Session',
      id: 's1',
      payload: '{"uid":"x1","kind":"Session"}',
      grantId: null,
      uid: 'x1',
      userCode: null,
      gatehouseSessionId: 'gs1',
      consumedAt: null,
      expiresAt: new Date(Date.UTC(2026, 1, 1, 0, 0, 0, 5)),
    }
    await upsertModel(ctx, row)
    expect(drizzleModel(database, 'Session', 's1')).toEqual(row)
    expect(await findModel(ctx, 'Session', 's1')).toEqual(row)
    expect(await findModelByUid(ctx, 'Session', 'x1')).toEqual(row)
    // Replaced without a Gatehouse session link: the stored link stays.
    const replaced = { ...row, payload: '{"uid":"x1","v":2}', gatehouseSessionId: null, expiresAt: null }
    await upsertModel(ctx, replaced)
    expect(await findModel(ctx, 'Session', 's1')).toEqual({ ...replaced, gatehouseSessionId: 'gs1' })
    expect(drizzleModel(database, 'Session', 's1')).toEqual({ ...replaced, gatehouseSessionId: 'gs1' })

    const token: OidcModelRow = {
      kind: 'RefreshToken',
      id: 'rt1',
      payload: '{"jti":"rt1","grantId":"g1"}',
      grantId: 'g1',
      uid: null,
      userCode: null,
      gatehouseSessionId: null,
      consumedAt: null,
      expiresAt: null,
    }
    await upsertModel(ctx, token)
    const at = new Date(Date.UTC(2026, 3, 4, 5, 6, 7, 890))
    await applyModelWrites(ctx, [{ op: 'consume', kind: 'RefreshToken', id: 'rt1', at, seen: token, payload: null }])
    const consumed = { ...token, payload: '{"jti":"rt1","grantId":"g1","consumed":1775279167}', consumedAt: at }
    expect(await findModel(ctx, 'RefreshToken', 'rt1')).toEqual(consumed)
    expect(drizzleModel(database, 'RefreshToken', 'rt1')).toEqual(consumed)
    // Consumed by someone else before this request's commit: reuse, the grant named.
    const second = applyModelWrites(ctx, [{ op: 'consume', kind: 'RefreshToken', id: 'rt1', at, seen: token, payload: null }])
    await expect(second).rejects.toBeInstanceOf(ConsumedMeanwhile)
    await expect(second).rejects.toMatchObject({ kind: 'RefreshToken', grantId: 'g1' })
    expect(await findModel(ctx, 'RefreshToken', 'nope')).toBeUndefined()
  })
})
