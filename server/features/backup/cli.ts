import { userInfo } from 'node:os'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { migrationsFolder } from '../../db/index.js'
import { packageVersion } from '../../panel/build.js'
import { archiveName, BACKUPS_DIR, createBackup, restoreArchive } from './archive.js'
import { BackupError, backupErrors } from './errors.js'
import { openExisting } from './store.js'
import { BACKUP_USAGE } from './usage.js'
import { readJsonFile } from '../../config/store.js'

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
 * Backups are of the SQLite data directory. On PostgreSQL (--database-url, GATEHOUSE_DATABASE_URL,
 * or `database.url` in the data directory's config.json or the GATEHOUSE_CONFIG file, as serve reads
 * them) a SQLite file left there is not the data in use: refused, pg_dump's job.
 */
function refuseOnPostgres(env: NodeJS.ProcessEnv, dataDir: string): void {
  const configured = [join(dataDir, 'config.json'), ...(env.GATEHOUSE_CONFIG ? [resolve(env.GATEHOUSE_CONFIG)] : [])].some((file) =>
    databaseUrlIn(file),
  )
  if (env.GATEHOUSE_DATABASE_URL || configured) throw backupErrors.postgres()
}

const dataDirOf = (parsed: ReturnType<typeof parse>) =>
  resolve((parsed.values['data-dir'] as string | undefined) ?? process.env.GATEHOUSE_DATA_DIR ?? './data')

export function backupCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return run(
    argv,
    async (parsed) => {
      const dataDir = dataDirOf(parsed)
      refuseOnPostgres(env, dataDir)
      const dbFile = join(dataDir, 'gatehouse.db')
      if (!existsSync(dbFile)) throw backupErrors.noDatabase(dataDir)
      const now = Date.now()
      const out = resolve((parsed.values.out as string | undefined) ?? join(dataDir, BACKUPS_DIR, archiveName(now, 'manual')))
      const sqlite = openExisting(dbFile)
      try {
        // The secret in use: GATEHOUSE_SECRET when set (it wins at serve), else the stored one.
        const stored = join(dataDir, 'secret')
        const secret = process.env.GATEHOUSE_SECRET || (existsSync(stored) ? readFileSync(stored, 'utf8').trim() : undefined)
        // VACUUM INTO: one read transaction, unaffected by the server's writes meanwhile.
        const result = await createBackup(
          { sqlite, dataDir, secret, migrationsFolder, version: packageVersion(), now, method: 'vacuum' },
          out,
        )
        const m = result.manifest
        process.stdout.write(
          `Backup written: ${result.file} (${kb(result.size)})\n` +
            `  schema version ${m.schemaVersion}, created ${m.createdAt}, ${m.rowCounts.user ?? 0} users, ${m.rowCounts.session ?? 0} sessions\n` +
            `  files: ${m.files.map((f) => f.name).join(', ')}\n`,
        )
      } finally {
        sqlite.close()
      }
    },
    true,
  )
}

export function restoreCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return run(
    argv,
    async (parsed) => {
      // The archive brings its own config.json: only a PostgreSQL given to this command is refused.
      if (env.GATEHOUSE_DATABASE_URL) throw backupErrors.postgres()
      const [file, ...extra] = parsed.positionals
      if (!file || extra.length > 0 || parsed.values['data-dir'] === undefined) {
        throw new BackupError('USAGE', 'usage: gatehouse restore <file> --data-dir <dir>')
      }
      const dataDir = dataDirOf(parsed)
      const result = await restoreArchive(resolve(file), dataDir, migrationsFolder, Date.now(), {
        userId: null,
        label: `os:${osAccount()}`,
        via: 'cli',
      })
      const m = result.manifest
      process.stdout.write(
        `Restored ${file} (created ${m.createdAt}, schema version ${m.schemaVersion}) into ${dataDir}\n` +
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
