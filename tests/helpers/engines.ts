/**
 * Real database engines for tests, started on loopback on a free port in a temporary directory and
 * removed afterwards: PostgreSQL (Debian's `postgresql` package, /usr/lib/postgresql/<major>/bin,
 * or PG_BIN) and Redis (Debian's `redis-server`, or REDIS_SERVER). CI installs both (.ci/run).
 *
 * PostgreSQL refuses to run as root: when the tests run as root, initdb and postgres run as the
 * `postgres` system user (created by the Debian package), or `nobody`, through spawn's uid/gid.
 *
 * When an engine is missing, `postgresUnavailable()` / `redisUnavailable()` say why; suites use
 * `describe.skipIf(...)` and print that reason loudly (`warnSkipped`) rather than pass silently.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

function postgresBin(): string | undefined {
  if (process.env.PG_BIN) return existsSync(join(process.env.PG_BIN, 'postgres')) ? process.env.PG_BIN : undefined
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const majors = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && Number(v) >= 14)
    .sort((a, b) => Number(b) - Number(a))
  for (const major of majors) {
    const bin = join(root, major, 'bin')
    if (existsSync(join(bin, 'postgres')) && existsSync(join(bin, 'initdb'))) return bin
  }
  return undefined
}

function redisBin(): string | undefined {
  const candidates = [process.env.REDIS_SERVER, '/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/bin/valkey-server']
  return candidates.find((c): c is string => !!c && existsSync(c))
}

/** Why no PostgreSQL can be started here, or undefined when one can. */
export function postgresUnavailable(): string | undefined {
  if (!postgresBin()) {
    return 'no PostgreSQL 14+ server binaries (install Debian\'s "postgresql" package, or set PG_BIN to a bin directory holding initdb and postgres)'
  }
  if (process.getuid?.() === 0 && unprivileged() === undefined)
    return 'running as root and no unprivileged user (postgres or nobody) to run PostgreSQL as'
  return undefined
}

/** Why no Redis can be started here, or undefined when one can. */
export function redisUnavailable(): string | undefined {
  return redisBin() ? undefined : 'no redis-server (install Debian\'s "redis-server" package, or set REDIS_SERVER)'
}

/** Prints a loud notice that a suite is skipped, and why. */
export function warnSkipped(suite: string, reason: string | undefined): void {
  if (!reason) return
  console.warn(`\n${'!'.repeat(78)}\n!! SKIPPED: ${suite}\n!! because ${reason}\n${'!'.repeat(78)}\n`)
}

function unprivileged(): { uid: number; gid: number } | undefined {
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim())
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim())
      if (uid > 0) return { uid, gid }
    } catch {}
  }
  return undefined
}

export interface PostgresServer {
  /** postgres://… of the `postgres` maintenance database (superuser `gatehouse`, no password). */
  url: string
  port: number
  /** Creates a new empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>
  stop(): Promise<void>
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
}

/** Starts a throwaway PostgreSQL (initdb in a temp dir, loopback only, fsync off). */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBin()
  if (!bin) throw new Error(postgresUnavailable())
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'))
  const user = process.getuid?.() === 0 ? unprivileged() : undefined
  if (process.getuid?.() === 0 && !user) throw new Error(postgresUnavailable())
  if (user) chownSync(dir, user.uid, user.gid)
  const as = user ? { uid: user.uid, gid: user.gid } : {}
  const data = join(dir, 'data')
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'gatehouse', '--auth=trust', '-E', 'UTF8', '--no-sync', '--locale=C'], {
    ...as,
    stdio: 'pipe',
  })
  const port = await freePort()
  let log = ''
  const child = spawn(
    join(bin, 'postgres'),
    [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=200',
    ],
    { ...as, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  child.stdout?.on('data', (c: Buffer) => {
    log += c.toString()
  })
  child.stderr?.on('data', (c: Buffer) => {
    log += c.toString()
  })
  const url = `postgres://gatehouse@127.0.0.1:${port}/postgres`
  const deadline = Date.now() + 20_000
  for (;;) {
    const client = new pg.Client({ connectionString: url })
    try {
      await client.connect()
      await client.end()
      break
    } catch (error) {
      await client.end().catch(() => {})
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL')
        rmSync(dir, { recursive: true, force: true })
        throw new Error(`PostgreSQL did not start: ${String(error)}\n${log}`)
      }
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  let n = 0
  return {
    url,
    port,
    async createDatabase(name = `db_${process.pid}_${++n}`) {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        await client.query(`CREATE DATABASE "${name}"`)
      } finally {
        await client.end()
      }
      return `postgres://gatehouse@127.0.0.1:${port}/${name}`
    },
    async stop() {
      // SIGINT: PostgreSQL's "fast" shutdown (disconnects clients, no waiting on them).
      child.kill('SIGINT')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited(child)
      clearTimeout(timer)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface RedisServer {
  url: string
  stop(): Promise<void>
}

/** Starts a throwaway Redis (loopback, no persistence) in a temp dir. */
export async function startRedis(): Promise<RedisServer> {
  const bin = redisBin()
  if (!bin) throw new Error(redisUnavailable())
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-redis-'))
  const port = await freePort()
  const child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let log = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${log}`)), 10_000)
    const onData = (c: Buffer) => {
      log += c.toString()
      if (/Ready to accept connections/.test(log)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', () => {
      clearTimeout(timer)
      reject(new Error(`redis-server exited:\n${log}`))
    })
  })
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM')
      await exited(child)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
