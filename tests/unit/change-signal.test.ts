import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { closeChangeSignals, sqliteChangeSignal, walIndexReadMethod } from '../../server/db/storage.js'
import { warnSkipped } from '../helpers/engines.js'

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

/** How this machine reads the -shm header by default: 'mmap' where native/wal-index was built. */
const defaultRead = (() => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-signal-'))
  const db = new Database(join(dir, 'probe.sqlite'))
  db.pragma('journal_mode = WAL')
  db.exec('create table t (n integer)') // SQLite maps the -shm file at its first transaction
  const method = walIndexReadMethod(db)
  db.close()
  rmSync(dir, { recursive: true, force: true })
  return method
})()
warnSkipped(
  'the mmap read of the SQLite WAL-index header (tests/unit/change-signal.test.ts)',
  process.platform === 'linux' && defaultRead !== 'mmap'
    ? 'the optional addon native/wal-index was not built at install (no C compiler or node-gyp headers?): the server reads the header with pread, one system call per request'
    : undefined,
)

/** This process's memory mappings of a file. */
const mappingsOf = (path: string) =>
  readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .filter((line) => line.endsWith(` ${path}`)).length

describe.each([
  ['by default', undefined],
  ['with pread', 'pread' as const],
])('sqliteChangeSignal (ownWrites), header read %s', (_label, headerRead) => {
  const signalOn = (db: Database.Database) => sqliteChangeSignal(db, { ownWrites: true, headerRead })

  it('answers true first, then false until something is written', () => {
    const { a } = setup()
    const signal = signalOn(a)
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
    const signal = signalOn(a)
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
    const signal = signalOn(a)
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
    const signal = signalOn(viaLink)
    signal.changed()
    commitFromAnotherProcess(file, 1)
    expect(signal.changed()).toBe(true)
    expect(signal.changed()).toBe(false)
  })

  it.runIf(process.platform === 'linux')('on Linux reads the -shm file SQLite has mapped, and releases it with the database', () => {
    const { file, a } = setup()
    const shm = `${file}-shm`
    const before = { descriptors: descriptorsOn(shm), mappings: mappingsOf(shm) }
    const signal = signalOn(a)
    signal.changed()
    const byMapping = (headerRead ?? defaultRead) === 'mmap'
    // A mapping of its own (the descriptor closed at once), or a descriptor read with pread.
    expect({ descriptors: descriptorsOn(shm), mappings: mappingsOf(shm) }).toEqual({
      descriptors: before.descriptors + (byMapping ? 0 : 1),
      mappings: before.mappings + (byMapping ? 1 : 0),
    })
    closeChangeSignals(a)
    expect({ descriptors: descriptorsOn(shm), mappings: mappingsOf(shm) }).toEqual(before)
  })
})
