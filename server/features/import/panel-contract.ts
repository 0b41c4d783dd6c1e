import { z } from 'zod'
import { mutation, none, query } from '../../panel-frame/op.js'

/** The Users view's Import step (issue 29): zod only, shared with the renderer. */

export const importReportSchema = z.object({
  users: z.number(),
  accounts: z.number(),
  sessions: z.number(),
  organizations: z.number(),
  skipped: z.array(
    z.object({ line: z.number().optional(), email: z.string().optional(), id: z.string().optional(), reason: z.literal('exists') }),
  ),
  errors: z.array(
    z.object({ line: z.union([z.number(), z.string()]), field: z.string().nullable(), reason: z.string(), email: z.string().optional() }),
  ),
})
export type ImportReportView = z.infer<typeof importReportSchema>

export const importJobSchema = z.object({
  id: z.string(),
  source: z.enum(['users-file', 'better-auth']),
  /** The file's name, or the better-auth database as given. */
  name: z.string(),
  dryRun: z.boolean(),
  running: z.boolean(),
  phase: z.enum(['checking', 'importing', 'done', 'failed']),
  /** Rows read so far, and the share of the file read (null when unknown: a better-auth database). */
  rows: z.number(),
  fraction: z.number().nullable(),
  startedAt: z.number(),
  finishedAt: z.number().nullable(),
  /** The report, as `gatehouse import … --json` prints it, once done. */
  report: importReportSchema.nullable(),
  refused: z.boolean(),
  /** Password hash formats found in the valid rows of a users file. */
  hashFormats: z.record(z.string(), z.number()),
  /** Why the import could not run at all (a source that cannot be read). */
  error: z.string().nullable(),
})
export type ImportJob = z.infer<typeof importJobSchema>

/** Base64 of at most 512 KiB of the file (the panel's HTTP transport takes 1 MiB a request). */
export const UPLOAD_CHUNK_BYTES = 512 * 1024

export const importContract = {
  'import.upload': mutation(
    'Receives a part of a users file (base64, in order); the first part (offset 0) starts a new upload',
    z
      .object({
        uploadId: z.string().max(64).nullable(),
        name: z.string().min(1).max(255),
        offset: z.number().int().min(0),
        data: z.string().max(Math.ceil(UPLOAD_CHUNK_BYTES / 3) * 4),
      })
      .strict(),
    z.object({ uploadId: z.string(), bytes: z.number() }),
  ),
  'import.start': mutation(
    'Starts an import or its dry run (follow it with import.status): an uploaded users file or a better-auth database',
    z.discriminatedUnion('source', [
      z
        .object({
          source: z.literal('users-file'),
          uploadId: z.string().max(64),
          format: z.enum(['json', 'csv']).nullable(),
          skipInvalid: z.boolean(),
          dryRun: z.boolean(),
        })
        .strict(),
      z
        .object({
          source: z.literal('better-auth'),
          from: z.string().trim().min(1, 'Enter the path of a better-auth SQLite file or a postgres:// URL').max(4096),
          dryRun: z.boolean(),
        })
        .strict(),
    ]),
    importJobSchema,
  ),
  'import.status': query('The import being run, or the last one', none, importJobSchema.nullable()),
}
