import { existsSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { AuthContext } from '../../core/context.js'
import type { Logger } from '../../log.js'
import { packageVersion } from '../../version.js'
import { archiveName, BACKUPS_DIR, type BackupManifest, type BackupResult, createBackup, isArchiveName, readManifest } from './archive.js'
import { SCHEDULE_MS } from './config.js'
import { backupErrors } from './errors.js'
import { type BackupDatabase, poolOf } from './store.js'

/** Progress of the backup being made (one at a time) or the last one made. */
export interface BackupJob {
  running: boolean
  kind: BackupManifest['kind']
  phase: 'snapshot' | 'archive' | 'done' | 'failed'
  fraction: number
  startedAt: number
  finishedAt: number | null
  error: string | null
  name: string | null
}

export interface BackupListing {
  name: string
  size: number
  createdAt: number
  manifest: BackupManifest | null
}

/** `gatehouse-backup-20261123-154500-123.tar.gz` → its epoch time. */
export function timeOfName(name: string): number | null {
  const m = /^gatehouse-backup-(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-(\d{3})/.exec(name)
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +m[7]!) : null
}

/**
 * The running server's backups: the ones in `<data dir>/backups`, made now or on schedule, one at
 * a time, with retention for scheduled ones.
 */
export class BackupService {
  job: BackupJob | null = null
  private current: Promise<BackupResult> | null = null

  constructor(
    readonly ctx: AuthContext,
    readonly dataDir: string,
    readonly migrationsFolder: string,
    readonly logger: Logger,
  ) {}

  /** What a backup reads: the SQLite file (on a connection of its own), or PostgreSQL through the server's pool. */
  get database(): BackupDatabase {
    return this.ctx.sqlite ? { sqliteFile: this.ctx.sqlite.name } : { postgres: poolOf(this.ctx.db) }
  }

  get directory(): string {
    return join(this.dataDir, BACKUPS_DIR)
  }

  /** Starts a backup; resolves when it is written. Refused while another one runs. */
  start(kind: BackupManifest['kind']): Promise<BackupResult> {
    if (this.current) throw backupErrors.busy()
    const now = this.ctx.clock.now()
    const name = archiveName(now, kind)
    const job: BackupJob = { running: true, kind, phase: 'snapshot', fraction: 0, startedAt: now, finishedAt: null, error: null, name }
    this.job = job
    const run = createBackup(
      {
        database: this.database,
        dataDir: this.dataDir,
        secret: this.ctx.secret,
        migrationsFolder: this.migrationsFolder,
        version: packageVersion(),
        now,
        kind,
        progress: (fraction, phase) => {
          job.fraction = fraction
          job.phase = phase
        },
      },
      join(this.directory, name),
    )
    this.current = run
    run.then(
      () => {
        Object.assign(job, { running: false, phase: 'done', fraction: 1, finishedAt: this.ctx.clock.now() })
        this.current = null
      },
      (error: Error) => {
        Object.assign(job, { running: false, phase: 'failed', error: error.message, finishedAt: this.ctx.clock.now() })
        this.current = null
        this.logger.error(`backup ${name} failed:`, error)
      },
    )
    return run
  }

  /** Resolves once no backup is being written (the server waits for it when closing). */
  async settle(): Promise<void> {
    await this.current?.catch(() => {})
  }

  /** Archives in the backups folder, newest first. */
  async list(): Promise<BackupListing[]> {
    if (!existsSync(this.directory)) return []
    const names = readdirSync(this.directory).filter(isArchiveName).sort().reverse()
    const out: BackupListing[] = []
    for (const name of names) {
      const file = join(this.directory, name)
      out.push({
        name,
        size: statSync(file).size,
        createdAt: timeOfName(name) ?? statSync(file).mtimeMs,
        manifest: await readManifest(file),
      })
    }
    return out
  }

  /** The path of a backup in the folder, or a refusal (no path outside it is ever named). */
  fileOf(name: string): string {
    const file = join(this.directory, name)
    if (!isArchiveName(name) || !existsSync(file)) throw backupErrors.badName()
    return file
  }

  remove(name: string): void {
    rmSync(this.fileOf(name))
  }

  /** Takes a scheduled backup when the last one is older than the schedule, then prunes. */
  async tick(): Promise<BackupResult | null> {
    const { schedule, keep } = this.ctx.config().backup
    if (schedule === 'off' || this.current) return null
    const auto = existsSync(this.directory)
      ? readdirSync(this.directory)
          .filter((n) => isArchiveName(n) && n.includes('-auto'))
          .sort()
      : []
    const last = auto.length ? timeOfName(auto[auto.length - 1] as string) : null
    const now = this.ctx.clock.now()
    if (last !== null && now - last < SCHEDULE_MS[schedule]) return null
    const result = await this.start('scheduled')
    this.prune(keep)
    this.logger.info(`Scheduled backup written: ${result.file}`)
    this.ctx.events.jobSucceeded('backup')
    return result
  }

  /** Deletes scheduled backups beyond `keep`, oldest first; manual ones are never pruned. */
  prune(keep: number): string[] {
    const auto = readdirSync(this.directory)
      .filter((n) => isArchiveName(n) && n.includes('-auto'))
      .sort()
    const doomed = auto.slice(0, Math.max(0, auto.length - keep))
    for (const name of doomed) rmSync(join(this.directory, name), { force: true })
    return doomed
  }
}

const services = new WeakMap<AuthContext, BackupService>()
export const backupServiceOf = (ctx: AuthContext): BackupService | undefined => services.get(ctx)
export const registerBackupService = (service: BackupService): void => {
  services.set(service.ctx, service)
}
