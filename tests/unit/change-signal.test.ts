import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync } from 'node:fs'
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
const defaultRead = walIndexReadMethod()
warnSkipped(
  'the mmap read of the SQLite WAL-index header (tests/unit/change-signal.test.ts)',
  process.platform === 'linux' && defaultRead !== 'mmap'
    ? 'the optional addon native/wal-index was not built at install (no C compiler or node-gyp headers?): the server reads the header with pread, one system call per request'
    : undefined,
)

/** The POSIX locks this process holds on a file (/proc/locks names the inode). */
const sqliteLocksOn = (path: string) => {
  const inode = String(statSync(path).ino)
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .filter((line) => {
      const fields = line.trim().split(/\s+/)
      return fields[1] === 'POSIX' && fields[4] === String(process.pid) && fields[5]?.split(':')[2] === inode
    }).length
}

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

  it("sees each of this connection's own commits at the very next call, through checkpoints and WAL restarts", () => {
    // Outside a transaction the header alone speaks for this connection's commits too (no
    // total_changes() asked): every commit rewrites it, the one that restarts the WAL included.
    const { a } = setup()
    const signal = signalOn(a)
    signal.changed()
    const modes = ['PASSIVE', 'FULL', 'RESTART', 'TRUNCATE']
    for (let n = 0; n < 80; n++) {
      a.prepare('insert into t values (?)').run(n)
      expect(signal.changed()).toBe(true)
      expect(signal.changed()).toBe(false)
      a.prepare('update t set n = n + 1 where n = ?').run(n)
      expect(signal.changed()).toBe(true)
      a.prepare('delete from t where n = ?').run(n + 1)
      expect(signal.changed()).toBe(true)
      expect(signal.changed()).toBe(false)
      if (n % 10 === 9) {
        a.pragma(`wal_checkpoint(${modes[((n - 9) / 10) % modes.length]})`)
        signal.changed()
        expect(signal.changed()).toBe(false)
      }
    }
  })

  it("sees this connection's writes inside a transaction before it commits, and after a rollback", () => {
    const { a } = setup()
    const signal = signalOn(a)
    signal.changed()
    a.exec('begin')
    a.prepare('insert into t values (1)').run()
    expect(signal.changed()).toBe(true)
    expect(signal.changed()).toBe(false)
    a.prepare('insert into t values (2)').run()
    expect(signal.changed()).toBe(true)
    a.exec('commit')
    signal.changed()
    expect(signal.changed()).toBe(false)
    a.exec('begin')
    a.prepare('insert into t values (3)').run()
    expect(signal.changed()).toBe(true)
    a.exec('rollback')
    a.prepare('insert into t values (4)').run()
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
    // A descriptor of its own, and with the addon a mapping of the header too.
    expect({ descriptors: descriptorsOn(shm), mappings: mappingsOf(shm) }).toEqual({
      descriptors: before.descriptors + 1,
      mappings: before.mappings + ((headerRead ?? defaultRead) === 'mmap' ? 1 : 0),
    })
    closeChangeSignals(a)
    expect({ descriptors: descriptorsOn(shm), mappings: mappingsOf(shm) }).toEqual(before)
  })

  it.runIf(process.platform === 'linux')("leaves SQLite's locks on the -shm file in place, so another process never resets it", () => {
    const { file, a } = setup()
    const held = sqliteLocksOn(`${file}-shm`)
    expect(held).toBeGreaterThan(0)
    const signal = signalOn(a)
    signal.changed()
    // Closing any descriptor of a file drops every POSIX lock the process holds on it.
    expect(sqliteLocksOn(`${file}-shm`)).toBe(held)
    commitFromAnotherProcess(file, 1)
    expect(signal.changed()).toBe(true)
    expect(sqliteLocksOn(`${file}-shm`)).toBe(held)
    expect(a.prepare('select count(*) as c from t').get()).toEqual({ c: 1 })
  })
})
