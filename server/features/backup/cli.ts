import { userInfo } from 'node:os'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { migrationsFolder } from '../../db/index.js'
import { packageVersion } from '../../version.js'
import { maskUrlPassword } from '../../config/url-password.js'
import { archiveName, BACKUPS_DIR, type BackupResult, createBackup, restoreArchive } from './archive.js'
import { BackupError, backupErrors } from './errors.js'
import type { BackupDatabase } from './store.js'
import { BACKUP_USAGE } from './usage.js'
import { readJsonFile } from '../../config/store.js'
import { databaseIdentity, runningDatabase } from '../../db/running-server.js'

const kb = (bytes: number) => (bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`)

function parse(argv: string[], withOut: boolean) {
  return parseArgs({
    args: argv,
    allowPositionals: !withOut,
    strict: true,
    options: {
      'data-dir': { type: 'string' },
      ...(withOut ? { out: { type: 'string' } } : {}),
      help: { type: 'boolean', short: 'h' },
    },
  })
}

/** Exit codes: 0 done, 1 refused (the one-line reason on stderr), 2 usage. */
async function run(argv: string[], command: (parsed: ReturnType<typeof parse>) => Promise<void>, withOut: boolean): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv, withOut)
  } catch (error) {
    process.stderr.write(`gatehouse: ${(error as Error).message}\n\n${BACKUP_USAGE}`)
    return 2
  }
  if (parsed.values.help) {
    process.stdout.write(BACKUP_USAGE)
    return 0
  }
  try {
    await command(parsed)
    return 0
  } catch (error) {
    if (error instanceof BackupError) {
      process.stderr.write(`gatehouse: ${error.message}\n`)
      return 1
    }
    throw error
  }
}

/** config `database.url` of a JSON file that exists (the data directory's config.json, the GATEHOUSE_CONFIG file). */
function databaseUrlIn(file: string): unknown {
  if (!existsSync(file)) return undefined
  const json = readJsonFile(file, 'config')
  const database = typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as { database?: unknown }).database : undefined
  return typeof database === 'object' && database !== null ? (database as { url?: unknown }).url : undefined
}

/**
 * The database a backup reads: the one `serve` would run on with the same flags, variables and
 * config (--database-url, GATEHOUSE_DATABASE_URL, `database.url` in the data directory's
 * config.json or the GATEHOUSE_CONFIG file), else the data directory's SQLite file.
 */
function postgresUrlOf(env: NodeJS.ProcessEnv, dataDir: string): string | undefined {
  if (env.GATEHOUSE_DATABASE_URL) return env.GATEHOUSE_DATABASE_URL
  for (const file of [...(env.GATEHOUSE_CONFIG ? [resolve(env.GATEHOUSE_CONFIG)] : []), join(dataDir, 'config.json')]) {
    const url = databaseUrlIn(file)
    if (typeof url === 'string' && url) return url
  }
  return undefined
}

/** A SQLite file `gatehouse migrate` renamed aside (`gatehouse.db.migrated-<time>`), the newest, or null. */
function migratedAway(dataDir: string): string | null {
  if (!existsSync(dataDir)) return null
  const aside = readdirSync(dataDir)
    .filter((name) => /^gatehouse\.db\.migrated-[0-9TZ.-]+$/.test(name))
    .sort()
  return aside.length ? join(dataDir, aside[aside.length - 1] as string) : null
}

const dataDirOf = (parsed: ReturnType<typeof parse>) =>
  resolve((parsed.values['data-dir'] as string | undefined) ?? process.env.GATEHOUSE_DATA_DIR ?? './data')

export function backupCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return run(
    argv,
    async (parsed) => {
      const dataDir = dataDirOf(parsed)
      const dbFile = join(dataDir, 'gatehouse.db')
      const url = postgresUrlOf(env, dataDir)
      // A server running on the directory names the database it uses: a backup of another one is refused.
      const running = runningDatabase(dataDir)
      const reading = databaseIdentity(url ? { postgres: url } : { sqliteFile: dbFile })
      if (running && running.database !== reading) throw backupErrors.notTheRunningOne(dataDir, running, reading)
      let database: BackupDatabase
      if (url) {
        // The logical export of the PostgreSQL database in use (one REPEATABLE READ transaction).
        database = { postgres: url }
      } else {
        if (!existsSync(dbFile)) {
          // The data moved to PostgreSQL and no URL was given: the stale copy is not backed up.
          const aside = migratedAway(dataDir)
          throw aside ? backupErrors.migratedAway(dataDir, aside) : backupErrors.noDatabase(dataDir)
        }
        // VACUUM INTO: one read transaction, unaffected by the server's writes meanwhile.
        database = { sqliteFile: dbFile }
      }
      const now = Date.now()
      const out = resolve((parsed.values.out as string | undefined) ?? join(dataDir, BACKUPS_DIR, archiveName(now, 'manual')))
      // The secret in use: GATEHOUSE_SECRET when set (it wins at serve), else the stored one.
      const stored = join(dataDir, 'secret')
      const secret = process.env.GATEHOUSE_SECRET || (existsSync(stored) ? readFileSync(stored, 'utf8').trim() : undefined)
      let result: BackupResult
      try {
        result = await createBackup({ database, dataDir, secret, migrationsFolder, version: packageVersion(), now }, out)
      } catch (error) {
        // A database holding no Gatehouse data while the data directory holds some: not the one in use.
        if (url && error instanceof BackupError && /holds no Gatehouse database/.test(error.message) && existsSync(dbFile)) {
          throw backupErrors.notInUse(
            `${error.message}, while ${dbFile} holds a Gatehouse database: the data in use is not in the database the configuration names (migrate it first: gatehouse migrate --to)`,
          )
        }
        throw error
      }
      const m = result.manifest
      process.stdout.write(
        `Backup written: ${result.file} (${kb(result.size)})\n` +
          `  ${url ? `from ${maskUrlPassword(url)}, ` : ''}schema version ${m.schemaVersion}, created ${m.createdAt}, ${m.rowCounts.user ?? 0} users, ${m.rowCounts.session ?? 0} sessions\n` +
          `  files: ${m.files.map((f) => f.name).join(', ')}\n`,
      )
    },
    true,
  )
}

export function restoreCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return run(
    argv,
    async (parsed) => {
      // Into PostgreSQL only when this command is given one (the archive brings its own config.json).
      const url = env.GATEHOUSE_DATABASE_URL || undefined
      const [file, ...extra] = parsed.positionals
      if (!file || extra.length > 0 || parsed.values['data-dir'] === undefined) {
        throw new BackupError('USAGE', 'usage: gatehouse restore <file> --data-dir <dir>')
      }
      const dataDir = dataDirOf(parsed)
      const result = await restoreArchive(
        resolve(file),
        dataDir,
        migrationsFolder,
        Date.now(),
        {
          userId: null,
          label: `os:${osAccount()}`,
          via: 'cli',
        },
        url ? { engine: 'postgres', url } : { engine: 'sqlite' },
      )
      const m = result.manifest
      process.stdout.write(
        `Restored ${file} (created ${m.createdAt}, schema version ${m.schemaVersion}) into ${url ? `${maskUrlPassword(url)} and ` : ''}${dataDir}\n` +
          (result.replacedDir
            ? `The replaced files are in ${result.replacedDir}; they are removed once the restored data has started.\n`
            : ''),
      )
    },
    false,
  )
}

function osAccount(): string {
  try {
    return userInfo().username
  } catch {
    return 'unknown'
  }
}
