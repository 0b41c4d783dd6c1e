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
    cache.set('x', 'cached', cache.mark())
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
    cache.set('x', 'cached', cache.mark())
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
    const mark = cache.mark()
    // The miss's query runs here; meanwhile the CLI revokes what it read.
    b.prepare("insert into t values ('k3', 'v')").run()
    cache.set('x', 'read before the commit', mark)
    expect(cache.get('x')).toBeUndefined()
    cache.set('x', 'read after', cache.mark())
    expect(cache.get('x')).toBe('read after')
    a.close()
    b.close()
  })

  it('does not store it either when another lookup noticed the commit first (concurrent requests)', () => {
    const { a, b } = open()
    const cache = new ChangeGuardedCache<string>(sqliteChangeSignal(a, { ownWrites: true }))
    // Request 1 misses and starts reading the session…
    expect(cache.get('revoked')).toBeUndefined()
    const mark = cache.mark()
    // …the CLI revokes it, and request 2's lookup (another token) is the one that sees the change…
    b.prepare("insert into t values ('k4', 'v')").run()
    expect(cache.get('other')).toBeUndefined()
    // …so the signal has nothing new to tell request 1, whose row predates the revocation.
    cache.set('revoked', 'read before the commit', mark)
    expect(cache.get('revoked')).toBeUndefined()
    a.close()
    b.close()
  })

  it('stays bounded under a flood of distinct keys', () => {
    const { a, b } = open()
    const cache = new ChangeGuardedCache<number>(sqliteChangeSignal(a, { ownWrites: true }), 100)
    cache.get('k0')
    for (let i = 0; i < 1000; i++) cache.set(`k${i}`, i, cache.mark())
    expect(cache.get('k0')).toBeUndefined()
    expect(cache.get('k999')).toBe(999)
    a.close()
    b.close()
  })
})
