import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { getTableColumns } from 'drizzle-orm'
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext } from '../../core/context.js'
import * as tables from '../../db/schema.js'
import { SqliteDatabase } from '../../db/sqlite-driver.js'
import { findExistingUsers } from './store.js'
import { emailTaken, type ImportOutcome, type ImportReport, usernameTaken } from './users.js'

/**
 * `gatehouse import better-auth --from <SQLite file | postgres URL>` (issue 29): copies a
 * better-auth 1.x database, ids kept, in one transaction. Passwords keep working (better-auth's
 * scrypt is Gatehouse's) and sessions too when Gatehouse runs with the app's secret (a session
 * cookie is the row's token signed with the secret).
 *
 * The source's schema is checked first against better-auth 1.7's columns (Gatehouse's own, which
 * are better-auth's, plus the few better-auth keeps and Gatehouse derives): a missing column or an
 * unknown one refuses the import with the table and column named, before anything is written.
 * Columns of `user` beyond better-auth's become the user's additional fields when
 * `user.additionalFields` configures them (and are left behind otherwise).
 *
 * Re-running skips what exists: a user whose id is already here is reported in `skipped`, and
 * every other row is inserted only when nothing holds its id or unique keys (ON CONFLICT DO
 * NOTHING). A source user whose email or username belongs to another Gatehouse user refuses the
 * whole import.
 */

interface SourceDb {
  /** Each table's columns, by table name. */
  tables(): Promise<Map<string, Set<string>>>
  /** The rows of a table, in pages, ordered by id. */
  pages(table: string, pageSize: number): AsyncIterable<Record<string, unknown>[]>
  close(): Promise<void>
}

async function openSource(from: string): Promise<SourceDb | { usage: string }> {
  if (/^postgres(ql)?:\/\//.test(from)) {
    const { default: pg } = await import('pg')
    const pool = new pg.Pool({ connectionString: from, max: 1 })
    try {
      await pool.query('select 1')
    } catch (e) {
      await pool.end()
      return { usage: `cannot connect to the source database: ${(e as Error).message}` }
    }
    return {
      async tables() {
        const { rows } = await pool.query<{ table_name: string; column_name: string }>(
          `select table_name, column_name from information_schema.columns where table_schema = current_schema()`,
        )
        const out = new Map<string, Set<string>>()
        for (const r of rows) out.set(r.table_name, (out.get(r.table_name) ?? new Set()).add(r.column_name))
        return out
      },
      async *pages(table, pageSize) {
        let after: string | null = null
        for (;;) {
          const { rows }: { rows: Record<string, unknown>[] } = await pool.query(
            `select * from "${table}" ${after === null ? '' : 'where id > $2'} order by id limit $1`,
            after === null ? [pageSize] : [pageSize, after],
          )
          if (rows.length === 0) return
          yield rows
          after = String(rows[rows.length - 1]?.id)
        }
      },
      close: () => pool.end(),
    }
  }
  const path = resolve(from)
  if (!existsSync(path)) return { usage: `no such better-auth database: ${from}` }
  let db: InstanceType<typeof SqliteDatabase>
  try {
    db = new SqliteDatabase(path, { readonly: true, fileMustExist: true })
    db.prepare('select count(*) from sqlite_master').get()
  } catch (e) {
    return { usage: `${from} is not a SQLite database: ${(e as Error).message}` }
  }
  return {
    async tables() {
      const out = new Map<string, Set<string>>()
      const names = db.prepare(`select name from sqlite_master where type = 'table'`).all() as Array<{ name: string }>
      for (const { name } of names) {
        const columns = db.prepare(`select name from pragma_table_info(?)`).all(name) as Array<{ name: string }>
        out.set(name, new Set(columns.map((c) => c.name)))
      }
      return out
    },
    async *pages(table, pageSize) {
      let after: unknown = null
      for (;;) {
        const rows = (
          after === null
            ? db.prepare(`select * from "${table}" order by id limit ?`).all(pageSize)
            : db.prepare(`select * from "${table}" where id > ? order by id limit ?`).all(after, pageSize)
        ) as Record<string, unknown>[]
        if (rows.length === 0) return
        yield rows
        after = rows[rows.length - 1]?.id
      }
    },
    close: async () => {
      db.close()
    },
  }
}

/** better-auth's table names, in an order that inserts parents before children, with Gatehouse's table. */
const COPIED = [
  ['user', () => tables.user],
  ['account', () => tables.account],
  ['session', () => tables.session],
  ['verification', () => tables.verification],
  ['organization', () => tables.organization],
  ['team', () => tables.team],
  ['member', () => tables.member],
  ['teamMember', () => tables.teamMember],
  ['invitation', () => tables.invitation],
  ['twoFactor', () => tables.twoFactor],
  ['passkey', () => tables.passkey],
  ['apikey', () => tables.apikey],
  ['jwks', () => tables.keypair],
] as const

/** Columns better-auth 1.7 has that Gatehouse derives instead of storing. */
const DERIVED: Record<string, string[]> = { team: ['memberCount'], teamMember: ['membershipKey'] }
/** Gatehouse's own columns that a better-auth database does not have. */
const GATEHOUSE_ONLY: Record<string, string[]> = { user: ['additionalFields'] }

type Columns = Record<string, SQLiteColumn>

/** The refusal for a source whose schema is not better-auth 1.x's, or null. */
function schemaProblem(source: Map<string, Set<string>>): { field: string | null; reason: string } | null {
  if (!source.has('user') || !source.has('account') || !source.has('session')) {
    return { field: null, reason: 'not a better-auth database: it has no user, account and session tables' }
  }
  for (const [name, table] of COPIED) {
    const present = source.get(name)
    if (!present) continue
    const columns = getTableColumns(table() as SQLiteTable) as unknown as Columns
    for (const column of Object.values(columns)) {
      if (GATEHOUSE_ONLY[name]?.includes(column.name)) continue
      if (column.notNull && !column.hasDefault && !present.has(column.name)) {
        return {
          field: `${name}.${column.name}`,
          reason: `a better-auth database of another schema version: table ${name} has no column ${column.name} (Gatehouse imports better-auth 1.x)`,
        }
      }
    }
    if (name === 'user') continue // extra user columns are additional fields
    const known = new Set([...Object.values(columns).map((c) => c.name), ...(DERIVED[name] ?? [])])
    const unknown = [...present].find((c) => !known.has(c))
    if (unknown !== undefined) {
      return {
        field: `${name}.${unknown}`,
        reason: `a better-auth database of another schema version: table ${name} has a column ${unknown} that better-auth 1.7 does not have`,
      }
    }
  }
  return null
}

function toDate(value: unknown): Date | null {
  if (value === null || value === undefined || value === '') return null
  if (value instanceof Date) return value
  if (typeof value === 'number') return new Date(value < 1e11 ? value * 1000 : value)
  const text = String(value)
  return new Date(/^\d+$/.test(text) ? Number(text) : text)
}

const toBoolean = (value: unknown): boolean | null =>
  value === null || value === undefined ? null : value === true || value === 1 || value === '1' || value === 'true' || value === 't'

/** A source row as the values of Gatehouse's table (dates, booleans and integers converted). */
function convertRow(columns: Columns, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, column] of Object.entries(columns)) {
    if (!(column.name in row)) continue
    const value = row[column.name]
    const type = column.columnType
    if (value === null || value === undefined) out[key] = null
    else if (/Timestamp/.test(type)) out[key] = toDate(value)
    else if (/Boolean/.test(type)) out[key] = toBoolean(value)
    else if (/Integer/.test(type)) out[key] = Number(value)
    else out[key] = typeof value === 'object' ? JSON.stringify(value) : String(value)
  }
  return out
}

/** The configured additional fields found among a source user's extra columns. */
function additionalFields(ctx: AuthContext, row: Record<string, unknown>): Record<string, unknown> | null {
  const out: Record<string, unknown> = {}
  for (const [name, def] of Object.entries(ctx.config().user.additionalFields)) {
    if (!(name in row) || row[name] === undefined) continue
    const value = row[name]
    if (value === null) out[name] = null
    else if (def.type === 'boolean') out[name] = toBoolean(value)
    else if (def.type === 'number') out[name] = Number(value)
    else if (def.type === 'date') out[name] = toDate(value)
    else out[name] = String(value)
  }
  return Object.keys(out).length > 0 ? out : null
}

class Refused extends Error {
  constructor(readonly report: ImportReport) {
    super('refused')
  }
}
class DryRunDone extends Error {
  constructor(readonly report: ImportReport) {
    super('dry run')
  }
}

const PAGE = 500

export async function importBetterAuth(
  ctx: AuthContext,
  options: {
    from: string
    dryRun: boolean
    via: 'cli' | 'panel'
    /** Each page copied: the table and the rows of the source copied so far (the panel's progress). */
    onProgress?: (progress: { table: string; rows: number }) => void
  },
): Promise<ImportOutcome | { usage: string }> {
  const source = await openSource(options.from)
  if ('usage' in source) return source
  const report: ImportReport = { users: 0, accounts: 0, sessions: 0, organizations: 0, skipped: [], errors: [] }
  try {
    const problem = schemaProblem(await source.tables())
    if (problem) return { report: { ...report, errors: [{ line: 'schema', ...problem }] }, refused: true, dryRun: options.dryRun }
    const present = await source.tables()
    const counts: Record<string, number> = {}
    let copied = 0
    await ctx.storage.transaction(async () => {
      for (const [name, table] of COPIED) {
        if (!present.has(name)) continue
        const target = table() as SQLiteTable
        const columns = getTableColumns(target) as unknown as Columns
        counts[name] = 0
        for await (const page of source.pages(name, PAGE)) {
          copied += page.length
          options.onProgress?.({ table: name, rows: copied })
          let rows = page.map((row) => convertRow(columns, row))
          if (name === 'user') {
            rows = page.map((row, i) => ({ ...rows[i], additionalFields: additionalFields(ctx, row) }))
            const existing = await findExistingUsers(ctx, {
              ids: rows.map((r) => r.id as string),
              emails: rows.map((r) => String(r.email).toLowerCase()),
              usernames: rows.flatMap((r) => (typeof r.username === 'string' ? [r.username] : [])),
            })
            const byId = new Set(existing.map((u) => u.id))
            const fresh: typeof rows = []
            for (const r of rows) {
              const id = r.id as string
              r.email = String(r.email).toLowerCase()
              if (byId.has(id)) {
                report.skipped.push({ id, email: r.email as string, reason: 'exists' })
                continue
              }
              const other = existing.find((u) => u.email === r.email)
              const email = r.email as string
              if (other) report.errors.push({ line: id, field: 'email', email, reason: emailTaken(email) })
              else if (typeof r.username === 'string' && existing.some((u) => u.username === r.username)) {
                report.errors.push({ line: id, field: 'username', email, reason: usernameTaken(r.username, email) })
              } else fresh.push(r)
            }
            rows = fresh
          }
          if (rows.length === 0) continue
          const inserted = await ctx.db
            .insert(target)
            .values(rows as never)
            .onConflictDoNothing()
            .returning()
          counts[name] = (counts[name] ?? 0) + inserted.length
        }
        if (name === 'user' && report.errors.length > 0) throw new Refused(report)
      }
      report.users = counts.user ?? 0
      report.accounts = counts.account ?? 0
      report.sessions = counts.session ?? 0
      report.organizations = counts.organization ?? 0
      if (options.dryRun) throw new DryRunDone(report)
      await recordAudit(ctx, {
        type: 'users.imported',
        detail: { via: options.via, source: 'better-auth', ...counts, skipped: report.skipped.length },
      })
    })
    return { report, refused: false, dryRun: false }
  } catch (e) {
    if (e instanceof Refused)
      return { report: { ...e.report, users: 0, accounts: 0, sessions: 0, organizations: 0 }, refused: true, dryRun: options.dryRun }
    if (e instanceof DryRunDone) return { report: e.report, refused: false, dryRun: true }
    throw e
  } finally {
    await source.close()
  }
}
