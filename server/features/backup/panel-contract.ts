import { z } from 'zod'
import { mutation, none, ok, query } from '../../panel-frame/op.js'

/** The backup view's operations (zod only: shared with the renderer). */

const archiveName = z.string().regex(/^gatehouse-backup-\d{8}-\d{6}-\d{3}(-auto)?\.tar\.gz$/, 'not a backup name')

export const backupJobSchema = z.object({
  running: z.boolean(),
  kind: z.enum(['manual', 'scheduled']),
  phase: z.enum(['snapshot', 'archive', 'done', 'failed']),
  fraction: z.number(),
  startedAt: z.number(),
  finishedAt: z.number().nullable(),
  error: z.string().nullable(),
  name: z.string().nullable(),
})

export const backupRowSchema = z.object({
  name: z.string(),
  size: z.number(),
  createdAt: z.number(),
  kind: z.enum(['manual', 'scheduled']),
  /** null when the archive has no readable manifest (damaged or foreign). */
  schemaVersion: z.number().nullable(),
  gatehouseVersion: z.string().nullable(),
  rowCounts: z.record(z.string(), z.number()).nullable(),
})
export type BackupRow = z.infer<typeof backupRowSchema>

export const backupContract = {
  'backup.list': query(
    'Backups in the data directory, the schedule, and the backup being made',
    none,
    z.object({
      directory: z.string(),
      dataDir: z.string(),
      schedule: z.enum(['off', 'hourly', 'daily', 'weekly']),
      keep: z.number(),
      backups: z.array(backupRowSchema),
      job: backupJobSchema.nullable(),
      pendingRestore: z.object({ archive: z.string(), createdAt: z.string() }).nullable(),
    }),
  ),
  'backup.create': mutation('Starts a backup now (follow it with backup.status)', none, backupJobSchema),
  'backup.status': query('The backup being made, or the last one', none, backupJobSchema.nullable()),
  'backup.delete': mutation('Deletes a backup file', z.object({ name: archiveName }).strict(), ok),
  'backup.schedule': mutation(
    'Sets how often the server takes a backup and how many scheduled ones it keeps',
    z.object({ schedule: z.enum(['off', 'hourly', 'daily', 'weekly']), keep: z.number().int().min(1).max(1000) }).strict(),
    ok,
  ),
  'backup.restorePlan': query(
    'What restoring a backup would replace (shown before the admin confirms)',
    z.object({ name: archiveName }).strict(),
    z.object({
      dataDir: z.string(),
      replaces: z.array(z.string()),
      current: z.record(z.string(), z.number()),
      backup: backupRowSchema,
    }),
  ),
  'backup.restore': mutation(
    'Verifies a backup and stages it; the next start of the server swaps it in',
    z.object({ name: archiveName, confirm: archiveName }).strict(),
    z.object({ staged: z.boolean(), message: z.string() }),
  ),
}
