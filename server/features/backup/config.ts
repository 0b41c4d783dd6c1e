import { z } from 'zod'

/**
 * `backup.*`: scheduled backups taken by the running server into `<data dir>/backups`.
 * Manual backups (CLI, panel) are never pruned; scheduled ones beyond `keep` are, oldest first.
 */
export const backupConfigSchema = z
  .object({
    /** How often the server takes a backup by itself; `off` (default) takes none. */
    schedule: z.enum(['off', 'hourly', 'daily', 'weekly']).default('off'),
    /** Scheduled backups kept; older ones are deleted after each new one. */
    keep: z.number().int().min(1).max(1000).default(7),
  })
  .prefault({})

export type BackupConfig = z.output<typeof backupConfigSchema>

export const SCHEDULE_MS: Record<Exclude<BackupConfig['schedule'], 'off'>, number> = {
  hourly: 3_600_000,
  daily: 86_400_000,
  weekly: 7 * 86_400_000,
}

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { backup: backupConfigSchema }
