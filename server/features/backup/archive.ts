import { createHash, randomBytes } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  fsyncSync,
  openSync,
  readSync,
  writeSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { hostname } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { createGunzip, gzipSync } from 'node:zlib'
import type Database from 'better-sqlite3'
import { z } from 'zod'
import { openDatabase } from '../../db/index.js'
import { BackupError, backupErrors } from './errors.js'
import { appliedMigrations, type BackupDatabase, integrityCheck, knownMigrations, openExisting, rowCounts, snapshot } from './store.js'
import { readTar, TarError, tarEnd, tarHeader, tarPadding } from './tar.js'
import { NETWORK_FILE, networkFile } from '../network/settings.js'
import { runningServer } from '../../db/running-server.js'

/**
 * A backup is one `.tar.gz`: `manifest.json` first, then `gatehouse.db` (an online snapshot; on
 * PostgreSQL the logical export of every table into a SQLite file, restorable into either engine),
 * `config.json` (the stored configuration, when there is one), `secret` (the auth secret, which
 * opens sealed provider and SMTP secrets) and `network.json` (the Network view's address, port and
 * base URL, when saved). The manifest names the Gatehouse version, the schema
 * version (applied migrations), the creation time, row counts and each file's SHA-256.
 */

export const FORMAT = 'gatehouse-backup'
export const FORMAT_VERSION = 1
export const DATA_FILES = ['gatehouse.db', 'config.json', 'secret', NETWORK_FILE] as const
/**
 * What a restore moves aside in the data directory: the database with its WAL files, the stored
 * config, and the secret (`secret.enc` is the desktop app's keychain-encrypted one; the app
 * re-encrypts a restored plain `secret` at its next start), and the Network view's settings.
 */
export const REPLACED_FILES = [
  'gatehouse.db',
  'gatehouse.db-wal',
  'gatehouse.db-shm',
  'config.json',
  'secret',
  'secret.enc',
  NETWORK_FILE,
] as const
const SECRET_FILES: readonly string[] = ['secret', 'secret.enc']

/**
 * The files a restore of `archiveFiles` replaces: the secret only when the archive carries one, the
 * Network settings likewise (an archive made before they were carried leaves the machine's own).
 */
export const replacedBy = (archiveFiles: readonly string[]): string[] =>
  REPLACED_FILES.filter(
    (name) =>
      (archiveFiles.includes('secret') || !SECRET_FILES.includes(name)) && (archiveFiles.includes(NETWORK_FILE) || name !== NETWORK_FILE),
  )
export const BACKUPS_DIR = 'backups'
export const RESTORE_MARKER = 'restore.json'
export const PENDING_DIR = 'restore-pending'

export const manifestSchema = z.object({
  format: z.literal(FORMAT),
  formatVersion: z.literal(FORMAT_VERSION),
  gatehouseVersion: z.string(),
  schemaVersion: z.number().int().min(0),
  schemaTag: z.string().nullable(),
  createdAt: z.string(),
  hostname: z.string(),
  kind: z.enum(['manual', 'scheduled']),
  rowCounts: z.record(z.string(), z.number().int().min(0)),
  files: z.array(z.object({ name: z.enum(DATA_FILES), size: z.number().int().min(0), sha256: z.string().regex(/^[0-9a-f]{64}$/) })),
})
export type BackupManifest = z.infer<typeof manifestSchema>

/**
 * Writing an archive stays off libuv's thread pool as far as it can: a running server's password
 * hashes keep up to all four of its threads busy (server/crypto/hash-queue.ts), and every
 * asynchronous file read, write or zlib step of 64 KiB queued behind them, so a 1 MB backup under
 * six concurrent sign-ups took 25 s (issue 50 §9). Files are read, compressed and written
 * synchronously a mebibyte at a time (a few milliseconds each), the event loop turning between two.
 */
const CHUNK = 1024 * 1024

function* fileChunks(file: string): Generator<Buffer> {
  const fd = openSync(file, 'r')
  try {
    for (;;) {
      const buffer = Buffer.allocUnsafe(CHUNK)
      const n = readSync(fd, buffer, 0, CHUNK, null)
      if (n === 0) return
      yield buffer.subarray(0, n)
    }
  } finally {
    closeSync(fd)
  }
}

const sha256File = (file: string): string => {
  const hash = createHash('sha256')
  for (const chunk of fileChunks(file)) hash.update(chunk)
  return hash.digest('hex')
}

/** `gatehouse-backup-20261123-154500-123[-auto].tar.gz` from an epoch time (UTC). */
export function archiveName(now: number, kind: BackupManifest['kind']): string {
  const iso = new Date(now).toISOString() // 2026-11-23T15:45:00.123Z
  const stamp = `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}-${iso.slice(20, 23)}`
  return `gatehouse-backup-${stamp}${kind === 'scheduled' ? '-auto' : ''}.tar.gz`
}

export const isArchiveName = (name: string): boolean => /^gatehouse-backup-\d{8}-\d{6}-\d{3}(-auto|-pre-upgrade)?\.tar\.gz$/.test(name)

export interface BackupSource {
  /** The live database: the SQLite file, or PostgreSQL (a URL, or the server's pool). */
  database: BackupDatabase
  dataDir: string
  /** The auth secret in use (written as `secret` when given). */
  secret?: string
  migrationsFolder: string
  version: string
  now: number
  kind?: BackupManifest['kind']
  /** The stored config to carry (default `<dataDir>/config.json`): the pre-upgrade backup carries the file as it was before a configuration migration. */
  configFile?: string
  progress?: (fraction: number, phase: 'snapshot' | 'archive') => void
}

export interface BackupResult {
  file: string
  size: number
  manifest: BackupManifest
}

/** Takes an online snapshot and writes the archive to `out` (written aside, then renamed). */
/** The files an archive carries beside its manifest: the database snapshot, the config, the secret and the Network view's settings. */
function archivedFiles(source: BackupSource, work: string, db: string): Array<{ name: (typeof DATA_FILES)[number]; path: string }> {
  const files: Array<{ name: (typeof DATA_FILES)[number]; path: string }> = [{ name: 'gatehouse.db', path: db }]
  const config = source.configFile ?? join(source.dataDir, 'config.json')
  if (existsSync(config)) files.push({ name: 'config.json', path: config })
  const secretFile = join(source.dataDir, 'secret')
  if (source.secret) {
    // A secret given by the environment is written into the work folder, readable by the owner only.
    writeFileSync(join(work, 'secret'), `${source.secret}\n`, { mode: 0o600 })
    files.push({ name: 'secret', path: join(work, 'secret') })
  } else if (existsSync(secretFile)) files.push({ name: 'secret', path: secretFile })
  const network = networkFile(source.dataDir)
  if (existsSync(network)) files.push({ name: NETWORK_FILE, path: network })
  return files
}

export async function createBackup(source: BackupSource, out: string): Promise<BackupResult> {
  mkdirSync(dirname(out), { recursive: true, mode: 0o700 })
  const work = join(dirname(out), `.backup-${process.pid}-${randomBytes(4).toString('hex')}`)
  mkdirSync(work, { mode: 0o700 })
  try {
    const db = join(work, 'gatehouse.db')
    source.progress?.(0, 'snapshot')
    await snapshot(source.database, db, source.migrationsFolder)
    source.progress?.(0.8, 'archive')
    const copy = openExisting(db)
    let counts: Record<string, number>
    let schemaVersion: number
    try {
      counts = rowCounts(copy)
      schemaVersion = appliedMigrations(copy)
    } finally {
      copy.close()
    }
    const entries = []
    for (const file of archivedFiles(source, work, db)) {
      entries.push({ ...file, size: statSync(file.path).size, sha256: sha256File(file.path) })
    }
    const tags = knownMigrations(source.migrationsFolder)
    const manifest: BackupManifest = {
      format: FORMAT,
      formatVersion: FORMAT_VERSION,
      gatehouseVersion: source.version,
      schemaVersion,
      schemaTag: tags[schemaVersion - 1] ?? null,
      createdAt: new Date(source.now).toISOString(),
      hostname: hostname(),
      kind: source.kind ?? 'manual',
      rowCounts: counts,
      files: entries.map(({ name, size, sha256 }) => ({ name, size, sha256 })),
    }
    const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`)
    const mtime = Math.floor(source.now / 1000)
    const total = entries.reduce((sum, e) => sum + e.size, 0) || 1
    let written = 0
    const tmp = `${out}.${process.pid}.tmp`
    const fd = openSync(tmp, 'w', 0o600)
    let open = true
    const closeOnce = () => {
      if (open) closeSync(fd)
      open = false
    }
    try {
      // Headers, paddings and file chunks are gathered into mebibytes, each compressed synchronously
      // as one gzip member (a gzip file may hold several: RFC 1952 §2.2; gunzip and Node read them
      // as one stream), then the event loop turns before the next (see CHUNK).
      let gathered: Buffer[] = []
      let gatheredBytes = 0
      const flush = async () => {
        if (gatheredBytes === 0) return
        writeSync(fd, gzipSync(Buffer.concat(gathered), { level: 6 }))
        gathered = []
        gatheredBytes = 0
        await new Promise<void>((r) => setImmediate(r))
      }
      const write = (chunk: Buffer) => {
        gathered.push(chunk)
        gatheredBytes += chunk.length
        return gatheredBytes >= CHUNK ? flush() : Promise.resolve()
      }
      await write(tarHeader('manifest.json', manifestBytes.length, mtime))
      await write(manifestBytes)
      await write(tarPadding(manifestBytes.length))
      for (const entry of entries) {
        await write(tarHeader(entry.name, entry.size, mtime))
        let copied = 0
        for (const chunk of fileChunks(entry.path)) {
          copied += chunk.length
          await write(chunk)
          written += chunk.length
          source.progress?.(0.8 + (0.2 * written) / total, 'archive')
        }
        // A file that changed size while being read (config.json rewritten) would break the format.
        if (copied !== entry.size) throw new BackupError('BACKUP_RACE', `${entry.name} changed while the backup was written; try again`)
        await write(tarPadding(entry.size))
      }
      await write(tarEnd())
      await flush()
      fsyncSync(fd)
    } finally {
      closeOnce()
    }
    chmodSync(tmp, 0o600)
    renameSync(tmp, out)
    return { file: out, size: statSync(out).size, manifest }
  } finally {
    rmSync(work, { recursive: true, force: true })
    for (const name of readdirSync(dirname(out))) {
      if (name.startsWith(`${basename(out)}.${process.pid}.`)) rmSync(join(dirname(out), name), { force: true })
    }
  }
}

/**
 * Reads an archive into `target` (created; must not exist) and verifies it: the manifest first,
 * every listed file present with its size and SHA-256, nothing else; the database passes
 * integrity_check, carries the schema version and row counts the manifest states, and is not newer
 * than this build. Older schema versions are migrated in `target`. Throws BackupError (one line).
 */
export async function verifyArchive(file: string, target: string, migrationsFolder: string): Promise<BackupManifest> {
  if (!existsSync(file) || !statSync(file).isFile()) throw backupErrors.noArchive(file)
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
  mkdirSync(target, { mode: 0o700 })
  let manifest: BackupManifest | null = null
  const seen = new Set<string>()
  try {
    const gunzip = createGunzip()
    const source = createReadStream(file).pipe(gunzip)
    await readTar(source, async (entry, body) => {
      if (!manifest) {
        if (entry.name !== 'manifest.json' || entry.type !== 'file' || entry.size > 1024 * 1024) throw backupErrors.noManifest()
        const chunks: Buffer[] = []
        for await (const chunk of body) chunks.push(chunk)
        let json: unknown
        try {
          json = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        } catch {
          throw backupErrors.badManifest('not JSON')
        }
        const parsed = manifestSchema.safeParse(json)
        if (!parsed.success) {
          const issue = parsed.error.issues[0]
          throw backupErrors.badManifest(`${issue?.path.join('.') || 'value'}: ${issue?.message}`)
        }
        manifest = parsed.data
        return
      }
      const listed = manifest.files.find((f) => f.name === entry.name)
      if (!listed || entry.type !== 'file' || seen.has(entry.name)) throw backupErrors.unexpectedFile(entry.name)
      seen.add(entry.name)
      const hash = createHash('sha256')
      let size = 0
      const out = createWriteStream(join(target, entry.name), { mode: 0o600 })
      await pipeline(
        body,
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            hash.update(chunk)
            size += chunk.length
            yield chunk
          }
        },
        out,
      )
      if (size !== listed.size || hash.digest('hex') !== listed.sha256) throw backupErrors.checksum(entry.name)
    })
  } catch (error) {
    if (error instanceof BackupError) throw error
    if (error instanceof TarError) throw /truncated/.test(error.message) ? backupErrors.truncated() : backupErrors.notTar()
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'Z_BUF_ERROR' || /unexpected end of file/i.test((error as Error).message)) throw backupErrors.truncated()
    if (code === 'Z_DATA_ERROR') throw /header/.test((error as Error).message) ? backupErrors.notGzip() : backupErrors.truncated()
    throw error
  }
  const found = manifest as BackupManifest | null
  if (!found) throw backupErrors.noManifest()
  for (const listed of found.files) if (!seen.has(listed.name)) throw backupErrors.missingFile(listed.name)
  if (!seen.has('gatehouse.db')) throw backupErrors.missingFile('gatehouse.db')

  const known = knownMigrations(migrationsFolder)
  if (found.schemaVersion > known.length) throw backupErrors.newerSchema(found.schemaVersion, known.length)
  const db = join(target, 'gatehouse.db')
  let sqlite: Database.Database
  try {
    sqlite = openExisting(db)
  } catch (error) {
    throw backupErrors.integrity((error as Error).message)
  }
  try {
    let integrity: string
    try {
      integrity = integrityCheck(sqlite)
    } catch (error) {
      throw backupErrors.integrity((error as Error).message)
    }
    if (integrity !== 'ok') throw backupErrors.integrity(integrity.slice(0, 200))
    if (appliedMigrations(sqlite) !== found.schemaVersion) throw backupErrors.schemaMismatch()
    const counts = rowCounts(sqlite)
    for (const [table, count] of Object.entries(found.rowCounts)) if (counts[table] !== count) throw backupErrors.rowCounts(table)
    for (const table of Object.keys(counts)) if (!(table in found.rowCounts)) throw backupErrors.rowCounts(table)
  } finally {
    sqlite.close()
  }
  if (found.schemaVersion < known.length) {
    // An archive from an earlier version: bring it to this schema before anything is replaced.
    const migrated = openDatabase(db, { migrations: migrationsFolder })
    migrated.close()
  }
  return found
}

/** Reads only the manifest (for listings): null when the archive has none. */
export async function readManifest(file: string): Promise<BackupManifest | null> {
  let manifest: BackupManifest | null = null
  const stop = new Error('stop')
  try {
    await readTar(createReadStream(file).pipe(createGunzip()), async (entry, body) => {
      if (entry.name !== 'manifest.json') throw stop
      const chunks: Buffer[] = []
      for await (const chunk of body) chunks.push(chunk)
      const parsed = manifestSchema.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')))
      manifest = parsed.success ? parsed.data : null
      throw stop
    })
  } catch {}
  return manifest
}

export interface RestoreResult {
  manifest: BackupManifest
  /** Where the replaced files were moved (null: nothing was there). */
  replacedDir: string | null
}

/**
 * Moves the data files of a verified staging folder into `dataDir`. What was there is moved into
 * `dataDir/replaced-<time>/` and named in `restore.json`; the next server start on the restored
 * data removes both.
 */
/** Who asked for a restore: recorded in the restored data's audit log at its first start (issue 31 §2). */
export interface RestoreRequester {
  /** The admin's user id (a panel restore), else null. */
  userId: string | null
  /** How the log names them: an email, `os:<account>`, `recovery-link`. */
  label: string
  via: 'panel' | 'cli'
}

export function swapIn(
  staging: string,
  dataDir: string,
  manifest: BackupManifest,
  now: number,
  archive: string,
  requestedBy: RestoreRequester | null = null,
): RestoreResult {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const present = replacedBy(manifest.files.map((f) => f.name)).filter((name) => existsSync(join(dataDir, name)))
  let replacedDir: string | null = null
  if (present.length > 0) {
    replacedDir = join(dataDir, `replaced-${new Date(now).toISOString().replaceAll(':', '-')}`)
    mkdirSync(replacedDir, { mode: 0o700 })
    for (const name of present) renameSync(join(dataDir, name), join(replacedDir, name))
  }
  for (const name of DATA_FILES) {
    if (existsSync(join(staging, name))) {
      renameSync(join(staging, name), join(dataDir, name))
      chmodSync(join(dataDir, name), 0o600)
    }
  }
  writeFileSync(
    join(dataDir, RESTORE_MARKER),
    `${JSON.stringify({ restoredAt: new Date(now).toISOString(), archive, createdAt: manifest.createdAt, replaced: replacedDir ? basename(replacedDir) : null, requestedBy }, null, 2)}\n`,
    { mode: 0o600 },
  )
  return { manifest, replacedDir }
}

/** Where a restore puts the database: the data directory's SQLite file, or a PostgreSQL database. */
export type RestoreTarget = { engine: 'sqlite' } | { engine: 'postgres'; url: string }

/**
 * The staged config.json made to run on the restore's target: `database.url` removed for SQLite (an
 * archive of a PostgreSQL install would otherwise start on that database, not on the restored file),
 * set to the target for PostgreSQL when the file names one. Returns the stored layer, or null.
 */
function fitConfigToTarget(staging: string, target: RestoreTarget): Record<string, unknown> | null {
  const file = join(staging, 'config.json')
  if (!existsSync(file)) return null
  const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  const database = config.database as Record<string, unknown> | undefined
  if (database && typeof database === 'object' && 'url' in database) {
    if (target.engine === 'sqlite') {
      delete database.url
      if (Object.keys(database).length === 0) delete config.database
    } else database.url = target.url
    writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 })
  }
  return config
}

/**
 * `gatehouse restore`: verify into a staging folder beside the data directory, then swap in.
 * Refused (nothing touched) under a running server or when verification fails. Into PostgreSQL,
 * the verified SQLite file is copied into the database (replacing what it holds, in one
 * transaction: server/db/pg/copy.ts) and the other files go to the data directory.
 */
export async function restoreArchive(
  file: string,
  dataDir: string,
  migrationsFolder: string,
  now: number,
  requestedBy: RestoreRequester | null = null,
  target: RestoreTarget = { engine: 'sqlite' },
): Promise<RestoreResult> {
  const pid = runningServer(dataDir)
  if (pid !== null) throw backupErrors.serverRunning(pid)
  const staging = join(dirname(dataDir), `.${basename(dataDir)}.restore-${process.pid}-${randomBytes(4).toString('hex')}`)
  try {
    const manifest = await verifyArchive(file, staging, migrationsFolder)
    const config = fitConfigToTarget(staging, target)
    if (target.engine === 'postgres') {
      const { copySqliteIntoPostgres } = await import('../../db/pg/copy.js')
      try {
        await copySqliteIntoPostgres(join(staging, 'gatehouse.db'), target.url, { replace: true, sharedConfig: config ?? undefined })
      } catch (error) {
        throw backupErrors.intoPostgres((error as Error).message)
      }
      // The data lives in PostgreSQL now: no SQLite file is left in the data directory (one there is moved aside).
      rmSync(join(staging, 'gatehouse.db'), { force: true })
    }
    return swapIn(staging, dataDir, manifest, now, basename(file), requestedBy)
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

/**
 * The panel's restore: the server is running, so the verified archive is staged in
 * `dataDir/restore-pending/` and swapped in by the next start, before the database opens.
 */
export async function stageRestore(
  file: string,
  dataDir: string,
  migrationsFolder: string,
  requestedBy: RestoreRequester | null = null,
): Promise<BackupManifest> {
  const pending = join(dataDir, PENDING_DIR)
  rmSync(pending, { recursive: true, force: true })
  const staging = join(dataDir, `.${PENDING_DIR}-${randomBytes(4).toString('hex')}`)
  try {
    const manifest = await verifyArchive(file, staging, migrationsFolder)
    writeFileSync(join(staging, 'manifest.json'), JSON.stringify({ archive: basename(file), manifest, requestedBy }), { mode: 0o600 })
    renameSync(staging, pending)
    return manifest
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

/** The restore staged by the panel, if any: its archive name and manifest. */
export function pendingRestore(
  dataDir: string,
): { archive: string; manifest: BackupManifest; requestedBy?: RestoreRequester | null } | null {
  const file = join(dataDir, PENDING_DIR, 'manifest.json')
  if (!existsSync(file)) return null
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { archive: string; manifest: BackupManifest; requestedBy?: RestoreRequester | null }
  } catch {
    return null
  }
}

/** At start, before the database opens: swaps in a restore the panel staged. */
export function applyPendingRestore(dataDir: string, now: number): RestoreResult | null {
  const pending = pendingRestore(dataDir)
  if (!pending) return null
  const result = swapIn(join(dataDir, PENDING_DIR), dataDir, pending.manifest, now, pending.archive, pending.requestedBy ?? null)
  rmSync(join(dataDir, PENDING_DIR), { recursive: true, force: true })
  return result
}

/** After the restored data has started once: the replaced files and the marker go. */
export interface FinishedRestore {
  archive: string
  replaced: string | null
  createdAt?: string
  restoredAt?: string
  requestedBy?: RestoreRequester | null
}

export function finishRestore(dataDir: string): FinishedRestore | null {
  const marker = join(dataDir, RESTORE_MARKER)
  if (!existsSync(marker)) return null
  let info: FinishedRestore
  try {
    info = JSON.parse(readFileSync(marker, 'utf8')) as FinishedRestore
  } catch {
    info = { archive: '?', replaced: null }
  }
  if (info.replaced && /^replaced-[0-9TZ.-]+$/.test(info.replaced)) rmSync(join(dataDir, info.replaced), { recursive: true, force: true })
  rmSync(marker, { force: true })
  return info
}
