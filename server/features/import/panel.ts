import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { maskUrlPassword } from '../../config/url-password.js'
import { generateId } from '../../crypto/random.js'
import { PanelError } from '../../panel-frame/errors.js'
import type { HandlerGroup } from '../../panel-frame/env.js'
import type { importContract } from './panel-contract.js'
import { importBetterAuth } from './better-auth.js'
import { importErrors } from './errors.js'
import type { ImportJob } from './panel-contract.js'
import { importUsersFile } from './users.js'
import { inferFormat } from './users-file.js'

type ImportOps = 'import.upload' | 'import.start' | 'import.status'

/** The panel takes files up to this size; larger ones go through `gatehouse import users`. */
const MAX_UPLOAD = 1024 * 1024 * 1024

/** The panel's upload directories by server, removed when it stops (the feature's start hook). */
const uploadDirs = new WeakMap<object, Set<string>>()

/** Removes the uploads the panel of this server received (kept for a dry run's import) when it stops. */
export function removeUploads(ctx: object): void {
  for (const dir of uploadDirs.get(ctx) ?? []) rmSync(dir, { recursive: true, force: true })
  uploadDirs.delete(ctx)
}

interface Upload {
  id: string
  name: string
  path: string
  bytes: number
}

const refuse = (status: number, error: { code: string; message: string }, message = error.message): never => {
  throw new PanelError(status, error.code, message)
}

/** A postgres:// URL's password is never shown back. */
const sourceName = (from: string): string => (/^postgres(ql)?:\/\//.test(from) ? maskUrlPassword(from) : from)

/** A job as it starts: running, nothing counted yet (the caller names it). */
const startedJob = (source: ImportJob['source'], dryRun: boolean): ImportJob => ({
  id: '',
  source,
  name: '',
  dryRun,
  running: true,
  phase: 'checking',
  rows: 0,
  fraction: null,
  startedAt: Date.now(),
  finishedAt: null,
  report: null,
  refused: false,
  hashFormats: {},
  error: null,
})

/** Runs a job's work in the background; a throw fails the job with its message, and either way it ends. */
async function runJob(current: ImportJob, work: () => Promise<void>): Promise<void> {
  try {
    await work()
  } catch (e) {
    current.error = (e as Error).message || 'The import failed'
    current.phase = 'failed'
  } finally {
    current.running = false
    current.finishedAt = Date.now()
    if (current.phase !== 'failed') current.phase = 'done'
  }
}

/**
 * The Users view's Import step (issue 29): the same domain functions as `gatehouse import`
 * (importUsersFile, importBetterAuth), run in the server. A users file comes up in parts
 * (`import.upload`, base64, in order) into a private temporary directory; `import.start` runs the
 * dry run or the import in the background, and `import.status` reports its progress and, at the
 * end, the report exactly as `--json` prints it. One import at a time; the file is removed after a
 * real import (a dry run keeps it for the import that follows).
 */
export const importPanel: HandlerGroup<typeof importContract, ImportOps> = (env) => {
  const { ctx } = env.gatehouse
  let dir: string | null = null
  const uploads = new Map<string, Upload>()
  let job: ImportJob | null = null

  const uploadDir = (): string => {
    if (!dir) {
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-import-'))
      const dirs = uploadDirs.get(ctx) ?? new Set<string>()
      uploadDirs.set(ctx, dirs.add(dir))
    }
    return dir
  }
  const discard = (upload: Upload) => {
    uploads.delete(upload.id)
    rmSync(upload.path, { force: true })
  }

  return {
    'import.upload'({ uploadId, name, offset, data }) {
      const bytes = Buffer.from(data, 'base64')
      let upload: Upload | undefined
      if (uploadId === null) {
        if (offset !== 0) refuse(409, importErrors.UPLOAD_OUT_OF_ORDER)
        // One file at a time: an earlier upload not in use is dropped.
        for (const old of [...uploads.values()]) if (!(job?.running && job.id === old.id)) discard(old)
        const id = generateId()
        upload = { id, name, path: join(uploadDir(), id), bytes: 0 }
        writeFileSync(upload.path, '', { mode: 0o600 })
        uploads.set(id, upload)
      } else {
        upload = uploads.get(uploadId)
        if (!upload) return refuse(404, importErrors.UPLOAD_NOT_FOUND)
        if (offset !== upload.bytes) return refuse(409, importErrors.UPLOAD_OUT_OF_ORDER)
      }
      if (upload.bytes + bytes.length > MAX_UPLOAD) {
        discard(upload)
        refuse(413, importErrors.UPLOAD_TOO_LARGE)
      }
      appendFileSync(upload.path, bytes)
      upload.bytes += bytes.length
      return { uploadId: upload.id, bytes: upload.bytes }
    },

    'import.start'(input) {
      if (job?.running) refuse(409, importErrors.IMPORT_RUNNING)
      const started = startedJob(input.source, input.dryRun)
      if (input.source === 'users-file') {
        const upload = uploads.get(input.uploadId) ?? refuse(404, importErrors.UPLOAD_NOT_FOUND)
        const format = input.format ?? inferFormat(upload.name) ?? refuse(400, importErrors.UNKNOWN_FORMAT)
        Object.assign(started, { id: upload.id, name: upload.name, fraction: 0 })
        job = started
        void runJob(started, async () => {
          const outcome = await importUsersFile(ctx, {
            file: upload.path,
            format,
            skipInvalid: input.skipInvalid,
            dryRun: input.dryRun,
            via: 'panel',
            onProgress: (p) => {
              started.phase = p.phase
              started.rows = p.rows
              started.fraction = p.totalBytes > 0 ? Math.min(1, p.bytes / p.totalBytes) : 1
            },
          })
          Object.assign(started, { report: outcome.report, refused: outcome.refused, hashFormats: outcome.hashFormats ?? {}, fraction: 1 })
          if (!input.dryRun && !outcome.refused) discard(upload)
        })
        // The file is as big as it is: a check of a file that vanished says so now.
        statSync(upload.path)
        return { ...started }
      }
      Object.assign(started, { id: generateId(), name: sourceName(input.from), phase: input.dryRun ? 'checking' : 'importing' })
      job = started
      void runJob(started, async () => {
        const outcome = await importBetterAuth(ctx, {
          from: input.from,
          dryRun: input.dryRun,
          via: 'panel',
          onProgress: (p) => {
            started.rows = p.rows
          },
        })
        if ('usage' in outcome) {
          started.error = `${importErrors.SOURCE_UNUSABLE.message}: ${outcome.usage}`
          started.phase = 'failed'
          return
        }
        Object.assign(started, { report: outcome.report, refused: outcome.refused })
      })
      return { ...started }
    },

    'import.status': () => (job ? { ...job, hashFormats: { ...job.hashFormats } } : null),
  }
}
