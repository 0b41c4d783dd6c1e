import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { ChangeGuardedCache } from '../../server/core/session-cache.js'
import { sqliteChangeSignal } from '../../server/db/storage.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function open() {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cache-'))
  dirs.push(dir)
  const file = join(dir, 'db.sqlite')
  const a = new Database(file)
  a.pragma('journal_mode = WAL')
  a.exec('create table t (k text primary key, v text)')
  return { a, b: new Database(file) }
}

describe('change-guarded cache', () => {
  it('serves entries until this connection writes anything', () => {
    const { a, b } = open()
    const cache = new ChangeGuardedCache<string>(sqliteChangeSignal(a, { ownWrites: true }))
    expect(cache.get('x')).toBeUndefined()
    cache.set('x', 'cached')
    expect(cache.get('x')).toBe('cached')
    a.prepare('select count(*) from t').get()
    expect(cache.get('x')).toBe('cached')
    a.prepare("insert into t values ('k', 'v')").run()
    expect(cache.get('x')).toBeUndefined()
    a.close()
    b.close()
  })

  it('is emptied by a commit from another connection (the CLI on the same data directory) at the very next lookup', () => {
    const { a, b } = open()
    const cache = new ChangeGuardedCache<string>(sqliteChangeSignal(a, { ownWrites: true }))
    expect(cache.get('x')).toBeUndefined()
    cache.set('x', 'cached')
    expect(cache.get('x')).toBe('cached')
    b.prepare("insert into t values ('k2', 'v')").run()
    expect(cache.get('x')).toBeUndefined()
    a.close()
    b.close()
  })

  it('does not store a value read while another connection committed (it may predate the commit)', () => {
    const { a, b } = open()
    const cache = new ChangeGuardedCache<string>(sqliteChangeSignal(a, { ownWrites: true }))
    expect(cache.get('x')).toBeUndefined()
    // The miss's query runs here; meanwhile the CLI revokes what it read.
    b.prepare("insert into t values ('k3', 'v')").run()
    cache.set('x', 'read before the commit')
    expect(cache.get('x')).toBeUndefined()
    cache.set('x', 'read after')
    expect(cache.get('x')).toBe('read after')
    a.close()
    b.close()
  })

  it('stays bounded under a flood of distinct keys', () => {
    const { a, b } = open()
    const cache = new ChangeGuardedCache<number>(sqliteChangeSignal(a, { ownWrites: true }), 100)
    cache.get('k0')
    for (let i = 0; i < 1000; i++) cache.set(`k${i}`, i)
    expect(cache.get('k0')).toBeUndefined()
    expect(cache.get('k999')).toBe(999)
    a.close()
    b.close()
  })
})
