import { recordAudit } from '../../core/audit.js'
import { defineFeature } from '../../feature.js'
import { applyPendingRestore, finishRestore } from './archive.js'
import { backupDownloads, backupPanel } from './panel.js'
import { BackupService, registerBackupService } from './service.js'
import { backupErrors } from './errors.js'
import { configSections } from './config.js'
import { migrationsFolder as sqliteMigrations } from '../../db/index.js'

/** How often the scheduler looks at the clock (the schedule itself is config: backup.schedule). */
const TICK_MS = 60_000

/**
 * Backups: `gatehouse backup` / `gatehouse restore` (server/cli.ts), scheduled backups with
 * retention run here, the panel's backup view, and the start-up half of a restore (a restore the
 * panel staged is swapped in before the database opens; the replaced data is removed once the
 * restored data has started).
 */
export const backupFeature = defineFeature({
  id: 'backup',
  config: configSections,
  errors: backupErrors,
  panel: backupPanel,
  panelDownloads: backupDownloads,
  beforeOpen(dataDir, logger) {
    const applied = applyPendingRestore(dataDir, Date.now())
    if (applied) {
      logger.info(`Restoring the backup of ${applied.manifest.createdAt} staged in the control panel`)
    }
  },
  start({ ctx, logger, dataDir, migrationsFolder }) {
    if (!dataDir) return undefined
    const finished = finishRestore(dataDir)
    if (finished) {
      // The restore's audit event goes into the restored data's own log (the one it replaced is set aside).
      const by = finished.requestedBy
      recordAudit(ctx, {
        type: 'backup.restored',
        actorUserId: by?.userId ?? null,
        target: finished.archive,
        detail: { archive: finished.archive, createdAt: finished.createdAt ?? null, via: by?.via ?? 'cli', actor: by?.label ?? null },
      }).catch((error: Error) => logger.warn(`restore not audited: ${error.message}`))
      logger.info(
        `Restored data (${finished.archive}) started${finished.replaced ? `; removed the replaced data (${finished.replaced})` : ''}`,
      )
    }
    // On PostgreSQL a backup is the logical export into the same archive (a SQLite file): its
    // schema version is SQLite's, so the archives are checked against SQLite's migrations.
    const service = new BackupService(ctx, dataDir, ctx.sqlite ? migrationsFolder : sqliteMigrations, logger)
    registerBackupService(service)
    const tick = () => {
      service.tick().catch((error: Error) => logger.error('scheduled backup failed:', error))
    }
    const first = setTimeout(tick, 5_000)
    const timer = setInterval(tick, TICK_MS)
    first.unref()
    timer.unref()
    return async () => {
      clearTimeout(first)
      clearInterval(timer)
      await service.settle()
    }
  },
})
