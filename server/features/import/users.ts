import { createHash } from 'node:crypto'
import { statSync } from 'node:fs'
import { z } from 'zod'
import { parseRoleList } from '../../core/access-control.js'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { unsavedUser } from '../../core/users.js'
import { ACCEPTED_HASH_FORMATS, type HashFormat, recognizeHash } from '../../crypto/foreign-hashes.js'
import { generateId } from '../../crypto/random.js'
import { knownRoles } from '../admin/access.js'
import { usernameProblem } from '../username/rules.js'
import { findExistingUsers, insertUsers, type NewCredential } from './store.js'
import { type FileRecord, readUsersFile, type UsersFileFormat } from './users-file.js'

/**
 * `gatehouse import users` (issue 29): a users file (JSON array or CSV, users-file.ts) becomes
 * users with their credential accounts, in one transaction.
 *
 * Two passes over the file, each streamed: the first validates every row and looks up what
 * already exists (no lock held, whatever the file's size); when nothing refuses the import, the
 * second runs the same checks again inside one transaction and inserts, batch by batch. So a
 * running server's writes wait only for the short second pass, and a row that changed between the
 * passes (someone signed up with a file's email meanwhile) still refuses the whole import.
 *
 * Re-running an import skips its users: an imported user's id is derived from its email
 * (importedUserId), so an existing user with that id is "the same import", and any other user
 * holding the email refuses the import. Memory grows with the number of rows (the emails and
 * usernames seen, to find duplicates), never with the file's size.
 */

export interface ImportProblem {
  /** CSV: the physical line (header = 1); JSON: the element's 1-based position; better-auth: the source row's id. */
  line: number | string
  field: string | null
  reason: string
  /** The row's email, on a conflict (with another Gatehouse user or an earlier row): the reason names it too. */
  email?: string
}

export interface ImportSkip {
  line?: number
  email?: string
  id?: string
  reason: 'exists'
}

export interface ImportReport {
  users: number
  accounts: number
  sessions: number
  organizations: number
  skipped: ImportSkip[]
  errors: ImportProblem[]
}

export interface ImportOutcome {
  report: ImportReport
  /** Nothing was imported because of the errors (exit code 1). */
  refused: boolean
  dryRun: boolean
  /** Password hash formats of the valid rows, by format (users files; the panel's preview shows them). */
  hashFormats?: Partial<Record<HashFormat, number>>
}

export interface ImportProgress {
  phase: 'checking' | 'importing'
  rows: number
  bytes: number
  totalBytes: number
}

export interface UsersImportOptions {
  file: string
  format: UsersFileFormat
  skipInvalid: boolean
  dryRun: boolean
  onProgress?: (progress: ImportProgress) => void
  /** Audit detail naming where the import came from (`via: cli`). */
  via: 'cli' | 'panel'
}

const BATCH = 500
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** The id of the user imported from a users file with this (lower-cased) email. */
export function importedUserId(email: string): string {
  const digest = createHash('sha256').update(`gatehouse users import\0${email}`).digest()
  let id = ''
  for (let i = 0; i < 32; i++) id += ID_ALPHABET[(digest[i] as number) % ID_ALPHABET.length]
  return id
}

const BOOLEAN_TEXT: Record<string, boolean> = { true: true, false: false, '1': true, '0': false, yes: true, no: false }

const rowSchema = z
  .object({
    email: z
      .string({ error: 'required, a string' })
      .trim()
      .toLowerCase()
      .pipe(z.email({ error: 'not an email address' }).max(254)),
    name: z.string({ error: 'must be a string' }).trim().max(1000).optional(),
    emailVerified: z
      .preprocess(
        (v) =>
          typeof v === 'string' && v.trim().toLowerCase() in BOOLEAN_TEXT
            ? BOOLEAN_TEXT[v.trim().toLowerCase()]
            : v === 0 || v === 1
              ? v === 1
              : v,
        z.boolean({ error: 'must be true or false' }),
      )
      .optional(),
    username: z.string({ error: 'must be a string' }).trim().optional(),
    role: z.string({ error: 'must be a string (roles separated by commas)' }).optional(),
    createdAt: z
      .preprocess(
        (v) => (typeof v === 'number' ? new Date(v) : typeof v === 'string' ? new Date(/^\d+$/.test(v.trim()) ? Number(v) : v) : v),
        z.date({ error: 'must be an ISO 8601 date or epoch milliseconds' }),
      )
      .optional(),
    image: z.string({ error: 'must be a string' }).max(100_000).optional(),
    passwordHash: z.string({ error: 'must be a string' }).optional(),
  })
  .strict()

type ValidRow = z.infer<typeof rowSchema>

interface Candidate {
  line: number
  row: UserRow
  passwordHash: string | null
}

/** A row's problem, or its user row. Checks needing no database: format, roles, username rules, hash format. */
function validate(ctx: AuthContext, line: number, fields: Record<string, unknown>, now: Date): Candidate | ImportProblem {
  // A null is an absent field (a query's NULL column, a jq `null`).
  const present = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null))
  const parsed = rowSchema.safeParse(present)
  if (!parsed.success) {
    const issue = parsed.error.issues[0] as z.core.$ZodIssue
    const field = issue.code === 'unrecognized_keys' ? (issue.keys[0] ?? null) : typeof issue.path[0] === 'string' ? issue.path[0] : null
    const reason = issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message
    return { line, field, reason }
  }
  const data: ValidRow = parsed.data
  const config = ctx.config()
  let role = 'user'
  if (data.role !== undefined && data.role.trim() !== '') {
    const roles = parseRoleList(data.role)
    const known = knownRoles(config)
    const unknown = roles.find((r) => !Object.hasOwn(known, r))
    if (unknown !== undefined) return { line, field: 'role', reason: `unknown role "${unknown}"` }
    role = roles.join(',')
  }
  let username: string | null = null
  let displayUsername: string | null = null
  if (data.username !== undefined && data.username !== '') {
    const problem = usernameProblem(ctx, data.username)
    if (problem) return { line, field: 'username', reason: USERNAME_REASONS[problem] ?? problem }
    username = data.username.toLowerCase()
    displayUsername = data.username
  }
  let passwordHash: string | null = null
  if (data.passwordHash !== undefined && data.passwordHash !== '') {
    const hash = data.passwordHash.trim()
    if (recognizeHash(hash) === null) {
      const reason = /^\$2[aby]?\$/.test(hash)
        ? 'truncated or malformed bcrypt hash'
        : `unknown password hash format (accepted: ${ACCEPTED_HASH_FORMATS.join(', ')})`
      return { line, field: 'passwordHash', reason }
    }
    passwordHash = hash
  }
  const createdAt = data.createdAt ?? now
  return {
    line,
    passwordHash,
    // The new-user row every creation builds (feature columns at their declared defaults), with
    // the file's id, dates and the columns it gives.
    row: {
      ...unsavedUser(ctx, {
        name: data.name ?? '',
        email: data.email,
        emailVerified: data.emailVerified ?? false,
        image: data.image ?? null,
        username,
        displayUsername,
        role,
      }),
      id: importedUserId(data.email),
      createdAt,
      updatedAt: now,
    },
  }
}

/** The conflicts with existing users, each naming the row's email (the better-auth import says the same). */
export const emailTaken = (email: string): string => `the email ${email} belongs to another Gatehouse user`
export const usernameTaken = (username: string, email: string): string =>
  `the username ${username} (row of ${email}) belongs to another Gatehouse user`

const USERNAME_REASONS: Record<string, string> = {
  USERNAME_TOO_SHORT: 'username too short',
  USERNAME_TOO_LONG: 'username too long',
  INVALID_USERNAME: 'username may contain only letters, digits, underscores and dots',
}

interface PassResult {
  report: ImportReport
  hashFormats: Partial<Record<HashFormat, number>>
  /** A broken file: refuses even with --skip-invalid. */
  hardRefusal: boolean
}

/**
 * Sorts a batch against the users the database already has — another user's email or username is
 * a problem of the row, the same user imported before is skipped — and (write) inserts the rest.
 */
async function settleBatch(ctx: AuthContext, batch: Candidate[], report: ImportReport, write: boolean): Promise<void> {
  const existing = await findExistingUsers(ctx, {
    ids: batch.map((c) => c.row.id),
    emails: batch.map((c) => c.row.email),
    usernames: batch.flatMap((c) => (c.row.username ? [c.row.username] : [])),
  })
  const byEmail = new Map(existing.map((u) => [u.email, u]))
  const byId = new Map(existing.map((u) => [u.id, u]))
  const byUsername = new Map(existing.flatMap((u) => (u.username ? [[u.username, u] as const] : [])))
  const users: UserRow[] = []
  const credentials: NewCredential[] = []
  for (const c of batch) {
    const sameEmail = byEmail.get(c.row.email)
    if (sameEmail && sameEmail.id !== c.row.id) {
      // A problem of the row like any other: it refuses the import, or --skip-invalid leaves it out.
      report.errors.push({ line: c.line, field: 'email', email: c.row.email, reason: emailTaken(c.row.email) })
      continue
    }
    if (sameEmail || byId.has(c.row.id)) {
      // Imported before (by this file or another): nothing is overwritten.
      report.skipped.push({ line: c.line, email: c.row.email, reason: 'exists' })
      continue
    }
    const holder = c.row.username ? byUsername.get(c.row.username) : undefined
    if (holder) {
      report.errors.push({
        line: c.line,
        field: 'username',
        email: c.row.email,
        reason: usernameTaken(c.row.username ?? '', c.row.email),
      })
      continue
    }
    users.push(c.row)
    if (c.passwordHash) credentials.push({ id: generateId(), userId: c.row.id, password: c.passwordHash, createdAt: c.row.createdAt })
  }
  report.users += users.length
  report.accounts += credentials.length
  if (write) await insertUsers(ctx, users, credentials)
}

/** The problem of a row whose email or username an earlier row of the file has; else notes the row's as seen. */
function duplicateInFile(candidate: Candidate, seen: { emails: Set<string>; usernames: Set<string> }): ImportProblem | null {
  const { email, username } = candidate.row
  if (seen.emails.has(email)) {
    return { line: candidate.line, field: 'email', email, reason: `duplicate email ${email}: an earlier row of this file has it` }
  }
  seen.emails.add(email)
  if (username) {
    if (seen.usernames.has(username)) {
      const reason = `duplicate username ${username} (row of ${email}): an earlier row of this file has it`
      return { line: candidate.line, field: 'username', email, reason }
    }
    seen.usernames.add(username)
  }
  return null
}

/** One pass over the file: validation, duplicates, the database's existing rows, and (write) the inserts. */
async function runPass(ctx: AuthContext, options: UsersImportOptions, write: boolean): Promise<PassResult> {
  const source = readUsersFile(options.file, options.format)
  const totalBytes = statSync(options.file).size
  const report: ImportReport = { users: 0, accounts: 0, sessions: 0, organizations: 0, skipped: [], errors: [] }
  let hardRefusal = false
  const hashFormats: Partial<Record<HashFormat, number>> = {}
  const seen = { emails: new Set<string>(), usernames: new Set<string>() }
  const now = new Date(ctx.clock.now())
  let batch: Candidate[] = []
  let rows = 0

  let lastProgress = 0
  for await (const record of source.records as AsyncIterable<FileRecord>) {
    rows++
    if ('problem' in record) {
      report.errors.push({ line: record.line, field: record.field, reason: record.problem })
      if (record.fatal) hardRefusal = true
      continue
    }
    const candidate = validate(ctx, record.line, record.fields, now)
    if ('reason' in candidate) {
      report.errors.push(candidate)
      continue
    }
    const duplicate = duplicateInFile(candidate, seen)
    if (duplicate) {
      report.errors.push(duplicate)
      continue
    }
    if (candidate.passwordHash) {
      const format = recognizeHash(candidate.passwordHash) as HashFormat
      hashFormats[format] = (hashFormats[format] ?? 0) + 1
    }
    batch.push(candidate)
    if (batch.length >= BATCH) {
      await settleBatch(ctx, batch, report, write)
      batch = []
      if (options.onProgress && rows - lastProgress >= BATCH) {
        lastProgress = rows
        options.onProgress({ phase: write ? 'importing' : 'checking', rows, bytes: source.bytesRead(), totalBytes })
      }
    }
  }
  if (batch.length > 0) await settleBatch(ctx, batch, report, write)
  options.onProgress?.({ phase: write ? 'importing' : 'checking', rows, bytes: totalBytes, totalBytes })
  return { report, hardRefusal, hashFormats }
}

/** Thrown inside the writing pass's transaction to roll it back with the pass's report. */
class RefusedDuringWrite extends Error {
  constructor(readonly result: PassResult) {
    super('import refused')
  }
}

const isRefused = (r: PassResult, skipInvalid: boolean) => r.hardRefusal || (r.report.errors.length > 0 && !skipInvalid)

/** A refused import imported nothing: its counts are zero, its problems and skipped rows listed. */
const refusedReport = (report: ImportReport): ImportReport => ({ ...report, users: 0, accounts: 0, sessions: 0, organizations: 0 })

/** Imports a users file; with `dryRun` (or a refusal) nothing changes and the report is the same. */
export async function importUsersFile(ctx: AuthContext, options: UsersImportOptions): Promise<ImportOutcome> {
  const checked = await runPass(ctx, options, false)
  const hashFormats = checked.hashFormats
  if (isRefused(checked, options.skipInvalid))
    return { report: refusedReport(checked.report), refused: true, dryRun: options.dryRun, hashFormats }
  if (options.dryRun || checked.report.users === 0) return { report: checked.report, refused: false, dryRun: options.dryRun, hashFormats }
  try {
    const written = await ctx.storage.transaction(
      async () => {
        const result = await runPass(ctx, options, true)
        if (isRefused(result, options.skipInvalid)) throw new RefusedDuringWrite(result)
        const { users, accounts } = result.report
        await recordAudit(ctx, {
          type: 'users.imported',
          detail: {
            via: options.via,
            source: 'users-file',
            format: options.format,
            users,
            accounts,
            skipped: result.report.skipped.length,
            errors: result.report.errors.length,
          },
        })
        return result
        // PostgreSQL: the unique indexes on email, username and id keep a concurrent writer from
        // slipping a clashing row in (its insert or ours fails), so serializable's predicate locks
        // over every looked-up batch would add nothing but cost.
      },
      { isolation: 'read committed' },
    )
    return { report: written.report, refused: false, dryRun: false, hashFormats: written.hashFormats }
  } catch (e) {
    if (e instanceof RefusedDuringWrite)
      return { report: refusedReport(e.result.report), refused: true, dryRun: false, hashFormats: e.result.hashFormats }
    throw e
  }
}
