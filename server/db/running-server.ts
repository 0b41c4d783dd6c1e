import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

/**
 * A server running on a data directory, as other processes see it (issue 50 §8): `gatehouse.pid`
 * names its process (restore refuses to write under it, migrate leaves its SQLite file in place),
 * and `gatehouse.engine.json` beside it names the database it uses, without secrets (no user, no
 * password, no options), so `gatehouse backup` refuses to read another one.
 */
export const PID_FILE = 'gatehouse.pid'
export const ENGINE_FILE = 'gatehouse.engine.json'

/** The database a process reads: the data directory's SQLite file, or a PostgreSQL URL. */
export type DatabaseRef = { sqliteFile: string } | { postgres: string }

/**
 * A database named without secrets, the same way by the server and by a command: `sqlite:<absolute
 * file>`, or `postgres://<host>:<port>/<database>` (port 5432 and the user's name as the database
 * when the URL leaves them out, as libpq does; a socket directory given as `?host=` kept).
 */
export function databaseIdentity(database: DatabaseRef): string {
  if ('sqliteFile' in database) return `sqlite:${resolve(database.sqliteFile)}`
  let url: URL
  try {
    url = new URL(database.postgres)
  } catch {
    return 'postgres://(unparsable URL)'
  }
  const socket = url.searchParams.get('host')
  const host = socket ?? url.hostname.toLowerCase()
  const name = decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username)
  return `postgres://${host}:${url.port || '5432'}/${name}`
}

/** The pid of a live server on `dataDir` (its pid file names a running process), else null. */
export function runningServer(dataDir: string): number | null {
  const file = join(dataDir, PID_FILE)
  if (!existsSync(file)) return null
  const pid = Number(readFileSync(file, 'utf8').trim())
  if (!Number.isInteger(pid) || pid <= 0) return null
  try {
    process.kill(pid, 0)
    return pid
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? pid : null
  }
}

/** Written by a server as it starts on `dataDir`, beside its pid file: this process and the database it uses. */
export function recordRunningServer(dataDir: string, database: DatabaseRef): void {
  writeFileSync(join(dataDir, PID_FILE), `${process.pid}\n`, { mode: 0o600 })
  writeFileSync(join(dataDir, ENGINE_FILE), `${JSON.stringify({ pid: process.pid, database: databaseIdentity(database) })}\n`, {
    mode: 0o600,
  })
}

/** Removed by the server as it stops, unless another process has written them since. */
export function forgetRunningServer(dataDir: string): void {
  for (const name of [PID_FILE, ENGINE_FILE]) {
    try {
      const file = join(dataDir, name)
      const text = readFileSync(file, 'utf8')
      const pid = name === PID_FILE ? Number(text.trim()) : (JSON.parse(text) as { pid?: unknown }).pid
      if (pid === process.pid) rmSync(file, { force: true })
    } catch {}
  }
}

/**
 * The live server on `dataDir` and the database it uses (its engine record, written by the same
 * process), else null: no server, or one that records no engine (a server older than the record).
 */
export function runningDatabase(dataDir: string): { pid: number; database: string } | null {
  const pid = runningServer(dataDir)
  if (pid === null) return null
  try {
    const record = JSON.parse(readFileSync(join(dataDir, ENGINE_FILE), 'utf8')) as { pid?: unknown; database?: unknown }
    return record.pid === pid && typeof record.database === 'string' ? { pid, database: record.database } : null
  } catch {
    return null
  }
}
