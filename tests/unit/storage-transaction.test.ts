import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { afterEach, describe, expect, it } from 'vitest'
import '../../server/schema.js' // the tables, handed down to db/ as they load (as gatehouse.ts does first)
import { type Database_, openDatabase } from '../../server/db/index.js'

/** The storage port's transaction helper on a real SQLite file (server/db/storage.ts). */

const opened: Array<{ dir: string; database: Database_ }> = []
afterEach(() => {
  for (const { dir, database } of opened.splice(0)) {
    database.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

function open(): Database_ {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-tx-'))
  const database = openDatabase(join(dir, 'gatehouse.db'))
  opened.push({ dir, database })
  database.sqlite.exec('CREATE TABLE probe (n INTEGER NOT NULL, tag TEXT NOT NULL)')
  return database
}

const insert = (database: Database_, n: number, tag: string) =>
  database.storage.db.run(sql`INSERT INTO probe (n, tag) VALUES (${n}, ${tag})`)
const rows = (database: Database_) =>
  database.sqlite.prepare('SELECT n, tag FROM probe ORDER BY rowid').all() as Array<{ n: number; tag: string }>

describe('storage.transaction (SQLite)', () => {
  it('commits what the body wrote when it resolves, and returns its value', async () => {
    const database = open()
    const result = await database.storage.transaction(async () => {
      await insert(database, 1, 'a')
      await insert(database, 2, 'a')
      return 'done'
    })
    expect(result).toBe('done')
    expect(database.sqlite.inTransaction).toBe(false)
    expect(rows(database)).toEqual([
      { n: 1, tag: 'a' },
      { n: 2, tag: 'a' },
    ])
  })

  it('rolls everything back when the body throws, and rethrows the error', async () => {
    const database = open()
    await insert(database, 0, 'before')
    const failure = database.storage.transaction(async () => {
      await insert(database, 1, 'lost')
      await insert(database, 2, 'lost')
      throw new Error('boom')
    })
    await expect(failure).rejects.toThrow('boom')
    expect(database.sqlite.inTransaction).toBe(false)
    expect(rows(database)).toEqual([{ n: 0, tag: 'before' }])
  })

  it('a nested call joins the outer transaction: the outer rollback undoes the inner writes', async () => {
    const database = open()
    const failure = database.storage.transaction(async () => {
      await insert(database, 1, 'outer')
      const inner = await database.storage.transaction(async () => {
        // Still the one open transaction (no nested BEGIN, which SQLite would refuse).
        expect(database.sqlite.inTransaction).toBe(true)
        await insert(database, 2, 'inner')
        return 'inner done'
      })
      expect(inner).toBe('inner done')
      // The inner call did not commit: the outer transaction is still open.
      expect(database.sqlite.inTransaction).toBe(true)
      throw new Error('outer fails after the inner call')
    })
    await expect(failure).rejects.toThrow('outer fails')
    expect(rows(database)).toEqual([])
  })

  it('a transaction after the storage went idle still joins nested calls, and code outside sees no transaction', async () => {
    const database = open()
    // The context store is switched off between transactions (server/db/storage.ts): the next
    // transaction switches it on again.
    await database.storage.transaction(async () => insert(database, 1, 'first'))
    await new Promise((resolve) => setImmediate(resolve))
    const failure = database.storage.transaction(async () => {
      await insert(database, 2, 'outer')
      await database.storage.transaction(async () => {
        expect(database.sqlite.inTransaction).toBe(true)
        await insert(database, 3, 'inner')
      })
      throw new Error('outer fails')
    })
    await expect(failure).rejects.toThrow('outer fails')
    // Outside any transaction, a call opens its own (and commits it).
    await database.storage.transaction(async () => insert(database, 4, 'after'))
    expect(database.sqlite.inTransaction).toBe(false)
    expect(rows(database)).toEqual([
      { n: 1, tag: 'first' },
      { n: 4, tag: 'after' },
    ])
  })

  it('serialises concurrent transactions: their writes never interleave, and one failing leaves the other intact', async () => {
    const database = open()
    const writer = (tag: string, fail = false) =>
      database.storage.transaction(async () => {
        for (let n = 0; n < 5; n++) {
          await insert(database, n, tag)
          // Yield to the event loop between statements, so an unserialised helper would interleave.
          await new Promise((resolve) => setImmediate(resolve))
        }
        if (fail) throw new Error(`${tag} fails`)
        return tag
      })
    const results = await Promise.allSettled([writer('a'), writer('b', true), writer('c')])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    const tags = rows(database).map((r) => r.tag)
    expect(tags).toEqual(['a', 'a', 'a', 'a', 'a', 'c', 'c', 'c', 'c', 'c'])
    expect(rows(database).map((r) => r.n)).toEqual([0, 1, 2, 3, 4, 0, 1, 2, 3, 4])
  })
})
