import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { closeChangeSignals, sqliteChangeSignal } from '../../server/db/storage.js'

/**
 * The SQLite change signal (server/db/storage.ts): this connection's writes and every commit of
 * another connection or process are seen at the very next call; nothing else counts. On Linux the
 * other side's commits are read from the WAL-index header in the -shm file.
 */

const dirs: string[] = []
const connections: Database.Database[] = []
afterEach(() => {
  for (const c of connections.splice(0)) {
    if (c.open) c.close()
    closeChangeSignals(c)
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function openAt(file: string): Database.Database {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  connections.push(db)
  return db
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-signal-'))
  dirs.push(dir)
  const file = join(dir, 'db.sqlite')
  const a = openAt(file)
  a.exec('create table t (n integer)')
  return { dir, file, a }
}

/** A commit by another operating-system process (as the CLI makes). */
function commitFromAnotherProcess(file: string, n: number): void {
  const script = `const D = require('better-sqlite3'); const db = new D(${JSON.stringify(file)}); db.prepare('insert into t values (?)').run(${n}); db.close()`
  execFileSync(process.execPath, ['-e', script], { cwd: process.cwd() })
}

/** The descriptors of this process open on a file. */
const descriptorsOn = (path: string) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path
    } catch {
      return false
    }
  }).length

describe('sqliteChangeSignal (ownWrites)', () => {
  it('answers true first, then false until something is written', () => {
    const { a } = setup()
    const signal = sqliteChangeSignal(a, { ownWrites: true })
    expect(signal.changed()).toBe(true)
    expect(signal.changed()).toBe(false)
    a.prepare('select count(*) from t').get()
    expect(signal.changed()).toBe(false)
    a.prepare('insert into t values (1)').run()
    expect(signal.changed()).toBe(true)
    expect(signal.changed()).toBe(false)
  })

  it('sees each commit of another connection at the very next call, and nothing between them', () => {
    const { file, a } = setup()
    const b = openAt(file)
    const signal = sqliteChangeSignal(a, { ownWrites: true })
    signal.changed()
    for (let n = 0; n < 40; n++) {
      b.prepare('insert into t values (?)').run(n)
      expect(signal.changed()).toBe(true)
      expect(signal.changed()).toBe(false)
      // A checkpoint moves no data, but one that restarts the WAL rewrites the header: it may count
      // as a change once (an extra emptying of a cache, never a missed commit).
      if (n % 10 === 9) {
        b.pragma('wal_checkpoint(TRUNCATE)')
        signal.changed()
        expect(signal.changed()).toBe(false)
      }
    }
  })

  it('sees a commit made by another process at the very next call', () => {
    const { file, a } = setup()
    const signal = sqliteChangeSignal(a, { ownWrites: true })
    signal.changed()
    for (let n = 0; n < 3; n++) {
      commitFromAnotherProcess(file, n)
      expect(signal.changed()).toBe(true)
      expect(signal.changed()).toBe(false)
    }
    expect(a.prepare('select count(*) as c from t').get()).toEqual({ c: 3 })
  })

  it('follows a database opened through a symbolic link', () => {
    const { dir, file } = setup()
    const link = join(dir, 'link.sqlite')
    symlinkSync(file, link)
    const viaLink = openAt(link)
    const signal = sqliteChangeSignal(viaLink, { ownWrites: true })
    signal.changed()
    commitFromAnotherProcess(file, 1)
    expect(signal.changed()).toBe(true)
    expect(signal.changed()).toBe(false)
  })

  it.runIf(process.platform === 'linux')('on Linux reads the -shm file SQLite has mapped, and closes it with the database', () => {
    const { file, a } = setup()
    const shm = `${file}-shm`
    const before = descriptorsOn(shm)
    const signal = sqliteChangeSignal(a, { ownWrites: true })
    signal.changed()
    expect(descriptorsOn(shm)).toBe(before + 1)
    closeChangeSignals(a)
    expect(descriptorsOn(shm)).toBe(before)
  })
})
