import { recordAudit } from '../../core/audit.js'
import { callerLabel, panelCaller } from '../../core/panel-caller.js'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { PanelEnv } from '../../panel-frame/env.js'
import { PanelError } from '../../panel-frame/errors.js'
import { pendingRestore, replacedBy, stageRestore } from './archive.js'
import { BackupError, backupErrors } from './errors.js'
import type { BackupRow } from './panel-contract.js'
import { type BackupListing, type BackupService, backupServiceOf } from './service.js'
import { rowCounts } from './store.js'

const toRow = (b: BackupListing): BackupRow => ({
  name: b.name,
  size: b.size,
  createdAt: b.createdAt,
  kind: b.manifest?.kind ?? (b.name.includes('-auto') ? 'scheduled' : 'manual'),
  schemaVersion: b.manifest?.schemaVersion ?? null,
  gatehouseVersion: b.manifest?.gatehouseVersion ?? null,
  rowCounts: b.manifest?.rowCounts ?? null,
})

/** BackupError → a panel refusal with its one-line message. */
async function refusing<T>(run: () => Promise<T> | T): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof BackupError)
      throw new PanelError(error.code === 'BACKUP_IN_PROGRESS' || error.code === 'NOT_AVAILABLE' ? 409 : 400, error.code, error.message)
    throw error
  }
}

export const backupPanel = (env: PanelEnv) => {
  const service = (): BackupService => {
    const found = backupServiceOf(env.gatehouse.ctx)
    if (!found) throw new PanelError(409, 'NOT_AVAILABLE', 'Backups need a data directory (this server runs in memory)')
    return found
  }
  return {
    'backup.list': async () => {
      const s = service()
      const pending = pendingRestore(s.dataDir)
      const { schedule, keep } = env.gatehouse.config.get().backup
      return {
        directory: s.directory,
        dataDir: s.dataDir,
        schedule,
        keep,
        backups: (await s.list()).map(toRow),
        job: s.job,
        pendingRestore: pending ? { archive: pending.archive, createdAt: pending.manifest.createdAt } : null,
      }
    },
    'backup.create': () =>
      refusing(() => {
        const s = service()
        // Runs on; the renderer follows it with backup.status. Failures are recorded on the job.
        s.start('manual').catch(() => {})
        return s.job
      }),
    'backup.status': () => service().job,
    'backup.delete': ({ name }: { name: string }) =>
      refusing(() => {
        service().remove(name)
        return { success: true }
      }),
    'backup.schedule': async ({ schedule, keep }: { schedule: 'off' | 'hourly' | 'daily' | 'weekly'; keep: number }) => {
      env.gatehouse.config.update({ backup: { schedule, keep } })
      await env.gatehouse.config.flushed()
      return { success: true }
    },
    'backup.restorePlan': ({ name }: { name: string }) =>
      refusing(async () => {
        const s = service()
        const sqlite = s.ctx.sqlite
        // Into PostgreSQL, with every instance stopped: the command line's (gatehouse restore --database-url).
        if (!sqlite) throw backupErrors.panelRestoreOnPostgres()
        s.fileOf(name)
        const listing = (await s.list()).find((b) => b.name === name)
        if (!listing) throw new PanelError(404, 'BACKUP_NOT_FOUND', 'no such backup')
        return {
          dataDir: s.dataDir,
          replaces: replacedBy(listing.manifest?.files.map((f) => f.name) ?? [])
            .filter((f) => existsSync(join(s.dataDir, f)))
            .map((f) => join(s.dataDir, f)),
          current: rowCounts(sqlite),
          backup: toRow(listing),
        }
      }),
    'backup.restore': ({ name, confirm }: { name: string; confirm: string }) =>
      refusing(async () => {
        if (confirm !== name) throw new PanelError(400, 'CONFIRMATION_MISMATCH', 'Type the backup name to confirm the restore')
        const s = service()
        if (!s.ctx.sqlite) throw backupErrors.panelRestoreOnPostgres()
        const caller = panelCaller()
        const requestedBy = caller
          ? { userId: caller.kind === 'admin' ? caller.user.id : null, label: callerLabel(caller), via: 'panel' as const }
          : null
        const manifest = await stageRestore(s.fileOf(name), s.dataDir, s.migrationsFolder, requestedBy)
        await recordAudit(env.gatehouse.ctx, {
          type: 'backup.restore-staged',
          target: name,
          detail: { archive: name, createdAt: manifest.createdAt, via: 'panel' },
        })
        env.logger.info(`Restore of ${name} staged; it replaces the data in ${s.dataDir} at the next start`)
        return {
          staged: true,
          message: `Backup of ${manifest.createdAt} verified and staged. Restart Gatehouse to finish the restore: the current data is kept aside until the restored data has started once.`,
        }
      }),
  }
}

/** GET /panel/download/backup/<name>: the archive file. */
export const backupDownloads = (env: PanelEnv) => ({
  backup: (name: string) => {
    const found = backupServiceOf(env.gatehouse.ctx)
    if (!found) return null
    try {
      return { file: found.fileOf(name), filename: name, type: 'application/gzip' }
    } catch {
      return null
    }
  },
})
