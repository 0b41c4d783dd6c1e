/**
 * The engine options of every command (server/db/engine.ts): --database-url / GATEHOUSE_DATABASE_URL
 * / config database.url, --database-pool-size, --redis-url / GATEHOUSE_REDIS_URL; an engine that
 * cannot be reached is one clear line (password hidden), not a half-started server.
 * CLI runs use dist/server/main.mjs: `npm run build:server` first.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../server/config/store.js'
import { maskUrlPassword } from '../../server/config/url-password.js'
import { resolveEngine, takeEngineFlags } from '../../server/db/engine.js'
import { createGatehouse } from '../../server/gatehouse.js'
import { GATEHOUSE_BIN } from '../helpers/process.js'
import { silentLogger } from '../helpers/server.js'

const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-engine-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

function cli(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [GATEHOUSE_BIN, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GATEHOUSE_DATABASE_URL: '',
      GATEHOUSE_REDIS_URL: '',
      GATEHOUSE_SECRET: 'engine-test-secret-0123456789abcdef',
      ...env,
    },
    timeout: 20_000,
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe('takeEngineFlags', () => {
  it('takes the three flags (spaced or with =) out of argv and leaves the rest in order', () => {
    const { argv, flags } = takeEngineFlags(
      [
        '--data-dir',
        'x',
        '--database-url',
        'postgres://u:p@h:5432/db',
        '--database-pool-size=4',
        '--redis-url=redis://127.0.0.1:6379',
        '--port',
        '0',
      ],
      {},
    )
    expect(argv).toEqual(['--data-dir', 'x', '--port', '0'])
    expect(flags).toEqual({ databaseUrl: 'postgres://u:p@h:5432/db', poolSize: 4, redisUrl: 'redis://127.0.0.1:6379' })
  })

  it('reads the variables when the flags are absent; flags win', () => {
    const env = { GATEHOUSE_DATABASE_URL: 'postgresql://h/env', GATEHOUSE_DATABASE_POOL_SIZE: '7', GATEHOUSE_REDIS_URL: 'rediss://r:6380' }
    expect(takeEngineFlags([], env).flags).toEqual({ databaseUrl: 'postgresql://h/env', poolSize: 7, redisUrl: 'rediss://r:6380' })
    expect(takeEngineFlags(['--database-url', 'postgres://h/flag'], env).flags.databaseUrl).toBe('postgres://h/flag')
    expect(takeEngineFlags([], { GATEHOUSE_DATABASE_URL: '' }).flags).toEqual({})
  })

  it('refuses malformed values, naming where they came from, with the password hidden', () => {
    const refused = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
      try {
        takeEngineFlags(argv, env)
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError)
        return (error as Error).message
      }
      throw new Error('accepted')
    }
    expect(refused(['--database-url', 'mysql://u:secret@h/db'])).toBe(
      '--database-url: "mysql://u:***@h/db" is not a postgres:// (or postgresql://) URL',
    )
    expect(refused([], { GATEHOUSE_DATABASE_URL: 'sqlite:x' })).toBe(
      'GATEHOUSE_DATABASE_URL: "sqlite:x" is not a postgres:// (or postgresql://) URL',
    )
    expect(refused(['--database-pool-size', '0'])).toBe('--database-pool-size: "0" is not a pool size (1-1000)')
    expect(refused([], { GATEHOUSE_DATABASE_POOL_SIZE: 'ten' })).toBe('GATEHOUSE_DATABASE_POOL_SIZE: "ten" is not a pool size (1-1000)')
    expect(refused(['--redis-url', 'http://r'])).toBe('--redis-url: "http://r" is not a redis:// (or rediss://) URL')
    expect(refused(['--database-url'])).toBe("option '--database-url <value>' argument missing")
    // A password holding an unencoded `/` or `#` makes no URL: still hidden in the message.
    expect(refused(['--database-url', 'postgres://gh:pa/ss@h/db'])).toBe('--database-url: "postgres://gh:***@h/db" is not a valid URL')
    expect(refused([], { GATEHOUSE_DATABASE_URL: 'postgres://gh:ab#cd@h/db' })).toBe(
      'GATEHOUSE_DATABASE_URL: "postgres://gh:***@h/db" is not a valid URL',
    )
    expect(maskUrlPassword('postgres://me:pw@h/db')).toBe('postgres://me:***@h/db')
    expect(maskUrlPassword('redis://:pw@h:6379')).toBe('redis://:***@h:6379')
    expect(maskUrlPassword('postgres://me@h/db')).toBe('postgres://me@h/db')
    // A valid URL without a password is left as it is, even with an `@` in its path.
    expect(maskUrlPassword('https://host:8443/@alice')).toBe('https://host:8443/@alice')
  })

  it('resolveEngine: flags over config; the pool size defaults to 10', () => {
    expect(resolveEngine({})).toEqual({ kind: 'sqlite' })
    expect(resolveEngine({}, { url: 'postgres://h/c', poolSize: 3 })).toEqual({ kind: 'postgres', url: 'postgres://h/c', poolSize: 3 })
    expect(resolveEngine({ databaseUrl: 'postgres://h/f' }, { url: 'postgres://h/c' })).toEqual({
      kind: 'postgres',
      url: 'postgres://h/f',
      poolSize: 10,
    })
    expect(resolveEngine({ databaseUrl: 'postgres://h/f', poolSize: 2 }, { poolSize: 3 })).toMatchObject({ poolSize: 2 })
  })
})

describe('an engine that cannot be reached: one clear line, nothing half-started', () => {
  const unreachable = 'postgres://gh:secret@127.0.0.1:1/x'
  it('serve and every data-directory command name the database (password hidden) and exit 2', () => {
    for (const args of [
      ['serve', '--port', '0', '--data-dir', dataDir, '--database-url', unreachable],
      [
        'user',
        'create',
        '--email',
        'a@example.com',
        '--password',
        'correct horse battery',
        '--name',
        'A',
        '--data-dir',
        dataDir,
        `--database-url=${unreachable}`,
      ],
      ['user', 'set-role', '--email', 'a@example.com', '--role', 'admin', '--data-dir', dataDir, '--database-url', unreachable],
      ['jwt', 'keys', '--data-dir', dataDir, '--database-url', unreachable],
    ]) {
      const run = cli(args)
      expect({ args, code: run.code }).toEqual({ args, code: 2 })
      expect(run.stderr).toMatch(/^gatehouse: database postgres:\/\/gh:\*\*\*@127\.0\.0\.1:1\/x: .*ECONNREFUSED/)
      expect(run.stderr).not.toContain('secret')
    }
    const viaEnv = cli(['serve', '--port', '0', '--data-dir', dataDir], { GATEHOUSE_DATABASE_URL: unreachable })
    expect([viaEnv.code, viaEnv.stderr.startsWith('gatehouse: database postgres://gh:***@127.0.0.1:1/x: ')]).toEqual([2, true])
    const redis = cli(['serve', '--port', '0', '--data-dir', dataDir, '--redis-url', 'redis://127.0.0.1:1'])
    expect(redis.code).toBe(2)
    expect(redis.stderr).toMatch(/^gatehouse: secondary storage redis:\/\/127\.0\.0\.1:1: /)
    // Six CLI starts one after another (8 s alone): a loaded full run took past the 30 s default.
  }, 90_000)

  it('backup reads the PostgreSQL it is given (the logical export): an unreachable one is refused in one line, its password masked (exit 1)', () => {
    const run = cli(['backup', '--data-dir', dataDir, '--database-url', unreachable])
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/^gatehouse: cannot connect to postgres:\/\/gh:\*\*\*@127\.0\.0\.1:1\/x: .*ECONNREFUSED.*\n$/)
    expect(run.stderr).not.toContain('secret')
  })

  it('a malformed URL is a usage error whatever the command', () => {
    const run = cli(['user', 'create', '--database-url', 'mysql://x/y'])
    expect([run.code, run.stderr]).toEqual([2, 'gatehouse: --database-url: "mysql://x/y" is not a postgres:// (or postgresql://) URL\n'])
  })

  it('config database.url is for openGatehouse: the synchronous SQLite constructor refuses it', () => {
    expect(() =>
      createGatehouse({
        dataDir: null,
        secret: 'engine-test-secret-0123456789abcdef',
        config: { database: { url: 'postgres://127.0.0.1:1/x' } },
        logger: silentLogger,
      }),
    ).toThrow('config database.url selects PostgreSQL: open this server with openGatehouse (gatehouse serve), not createGatehouse')
  })

  it('the help of serve still works and names the options', () => {
    const run = cli(['--help'])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('--database-url <url>     GATEHOUSE_DATABASE_URL')
    expect(run.stdout).toContain('--redis-url <url>        GATEHOUSE_REDIS_URL')
    expect(run.stdout).toContain('gatehouse migrate --to postgres://…')
  })
})
