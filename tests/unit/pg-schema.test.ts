/**
 * The PostgreSQL mirror (server/db/pg/schema.ts) against the SQLite schema it is generated from:
 * same tables, columns, JS types, nullability, defaults, indexes, unique constraints and foreign
 * keys, so a table or column added on one side and not the other fails here. Also: store code
 * takes its tables from server/db/schema.ts only (the dialect switch rebinds that module's
 * exports), and bindTables really rebinds them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { getTableConfig as pgConfig, type PgColumn, type PgTable } from 'drizzle-orm/pg-core'
import { getTableConfig as sqliteConfig, type SQLiteColumn, type SQLiteTable } from 'drizzle-orm/sqlite-core'
import { describe, expect, it, vi } from 'vitest'
import { PG_EXTRA_INDEXES, pgSchemaFile, renderPgSchema } from '../../server/db/pg/generate-schema.js'
import { pgSchema } from '../../server/db/pg/schema.js'
import * as bound from '../../server/db/schema.js'
import { schema } from '../../server/schema.js'

const root = join(import.meta.dirname, '..', '..')
const sqliteTables = Object.entries(schema) as [string, SQLiteTable][]
const pgTables = pgSchema as unknown as Record<string, PgTable>

function columnsOf(table: SQLiteTable | PgTable, columns: (SQLiteColumn | PgColumn)[]) {
  return Object.fromEntries(
    Object.entries(table)
      .filter(([, c]) => columns.includes(c))
      .map(([prop, c]) => {
        const col = c as SQLiteColumn | PgColumn
        return [
          prop,
          {
            name: col.name,
            dataType: col.dataType,
            notNull: col.notNull,
            primary: col.primary,
            default: col.default,
            enumValues: col.enumValues ?? [],
          },
        ]
      }),
  )
}

const columnNames = (cols: unknown[]) => cols.map((c) => (c as { name?: string }).name ?? '(expression)')

describe('PostgreSQL schema mirror', () => {
  it('is the generator output for the current SQLite tables (regenerate: npx tsx server/db/pg/generate-schema.ts)', () => {
    expect(readFileSync(pgSchemaFile, 'utf8')).toBe(renderPgSchema())
  })

  it('has exactly the same tables', () => {
    expect(Object.keys(pgTables).sort()).toEqual(sqliteTables.map(([k]) => k).sort())
    for (const [key, table] of sqliteTables) expect(pgConfig(pgTables[key] as PgTable).name).toBe(sqliteConfig(table).name)
  })

  for (const [key, sqliteTable] of sqliteTables) {
    it(`${key}: same columns, JS types, nullability, defaults, indexes and foreign keys`, () => {
      const s = sqliteConfig(sqliteTable)
      const pgTable = pgTables[key] as PgTable
      const p = pgConfig(pgTable)
      expect(columnsOf(pgTable, p.columns)).toEqual(columnsOf(sqliteTable, s.columns))

      const sIndexes = s.indexes.map((i) => ({ name: i.config.name, unique: i.config.unique, columns: columnNames(i.config.columns) }))
      const extra = new Set((PG_EXTRA_INDEXES[s.name] ?? []).map((code) => /'([^']+)'/.exec(code)?.[1]))
      const pIndexes = p.indexes
        .filter((i) => !extra.has(i.config.name))
        .map((i) => ({ name: i.config.name, unique: i.config.unique, columns: columnNames(i.config.columns) }))
      expect(pIndexes).toEqual(sIndexes)

      expect(p.uniqueConstraints.map((u) => u.getName())).toEqual(s.uniqueConstraints.map((u) => u.getName()))
      expect(p.primaryKeys.map((k) => k.getName())).toEqual(s.primaryKeys.map((k) => k.getName()))

      const fk = (f: (typeof s.foreignKeys)[number] | (typeof p.foreignKeys)[number], config: (t: never) => { name: string }) => {
        const ref = f.reference()
        return {
          name: f.getName(),
          columns: ref.columns.map((c) => c.name),
          foreignTable: config(ref.foreignTable as never).name,
          foreignColumns: ref.foreignColumns.map((c) => c.name),
          onDelete: f.onDelete ?? 'no action',
          onUpdate: f.onUpdate ?? 'no action',
        }
      }
      expect(p.foreignKeys.map((f) => fk(f, pgConfig as never))).toEqual(s.foreignKeys.map((f) => fk(f, sqliteConfig as never)))
    })
  }

  it('keeps list-users trigram indexes on lower(email) and lower(name), PostgreSQL only', () => {
    const names = pgConfig(pgTables.user as PgTable).indexes.map((i) => [i.config.name, i.config.method])
    expect(names).toContainEqual(['user_email_trgm_idx', 'gin'])
    expect(names).toContainEqual(['user_name_trgm_idx', 'gin'])
  })
})

describe('the dialect switch', () => {
  const TABLE_NAMES = new Set(Object.keys(schema))
  const schemaModules = new Set<string>()
  const files: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry)
      if (statSync(path).isDirectory()) walk(path)
      else if (path.endsWith('.ts')) files.push(path)
    }
  }
  walk(join(root, 'server'))
  for (const f of files) if (/\/schema\.ts$/.test(f) && !f.endsWith(join('config', 'schema.ts'))) schemaModules.add(f)

  it('store code imports table values from server/db/schema.ts only (type imports are free)', () => {
    const allowed = join(root, 'server', 'db', 'schema.ts')
    const aggregation = join(root, 'server', 'features', 'tables.ts')
    const offenders: string[] = []
    for (const file of files) {
      // Schema definitions themselves (feature schemas reference core tables for foreign keys), and
      // their aggregation on the composition floor (server/features/tables.ts, server/schema.ts).
      if (
        schemaModules.has(file) ||
        file === aggregation ||
        file.endsWith(join('db', 'core-schema.ts')) ||
        file.includes(join('db', 'pg', ''))
      )
        continue
      const text = readFileSync(file, 'utf8')
      for (const match of text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/g)) {
        const [, typeOnly, names = '', source = ''] = match
        if (typeOnly || !source.startsWith('.')) continue
        const target = resolve(dirname(file), source.replace(/\.js$/, '.ts'))
        if (target === allowed || !(schemaModules.has(target) || target === aggregation || target.endsWith('core-schema.ts'))) continue
        const values = names
          .split(',')
          .map((n) => n.trim())
          .filter((n) => n && !n.startsWith('type '))
          .map((n) => n.split(/\s+as\s+/)[0] as string)
          .filter((n) => TABLE_NAMES.has(n))
        if (values.length) offenders.push(`${relative(root, file)}: ${values.join(', ')} from ${source}`)
      }
    }
    expect(offenders).toEqual([])
  })

  it('bindTables rebinds every table export (live bindings), and refuses an incomplete set', () => {
    expect(() => bound.bindTables({ ...pgSchema, passkey: undefined } as never, 'postgres')).toThrow('no postgres table for passkey')
    expect(bound.user).toBe(schema.user)
    bound.bindTables(pgSchema, 'postgres')
    try {
      for (const key of TABLE_NAMES) expect((bound as unknown as Record<string, unknown>)[key]).toBe(pgTables[key])
      expect(bound.boundDialect).toBe('postgres')
    } finally {
      bound.bindTables(schema, 'sqlite')
    }
    expect(bound.user).toBe(schema.user)
  })

  it('before the composition floor hands the tables down, every binding throws on use, and nothing opens or binds', async () => {
    vi.resetModules()
    const fresh = await import('../../server/db/schema.js')
    expect(fresh.boundDialect).toBe(null)
    expect(() => fresh.user.id).toThrow('table user: the tables are not handed down yet')
    expect(() => fresh.apikey.key).toThrow('table apikey: the tables are not handed down yet')
    expect(() => fresh.sqliteTables()).toThrow('the tables are not handed down yet')
    expect(() => fresh.bindTables(pgSchema, 'postgres')).toThrow('the tables are not handed down yet')
    const { openDatabase } = await import('../../server/db/index.js')
    expect(() => openDatabase(':memory:')).toThrow('the tables are not handed down yet')
    vi.resetModules()
  })

  it('no module below the composition root reads a table as it loads (the bundle loads its chunks in an order of its own)', async () => {
    vi.resetModules()
    const composition =
      /\/server\/(gatehouse|main|cli|cli-user|schema|gen-pg-schema|config-schema|routes)\.ts$|\/server\/features\/index\.ts$/
    const failures: string[] = []
    for (const file of files.filter((f) => !composition.test(f) && !f.endsWith('.d.ts') && !f.includes(`${join('db', 'migrations')}`))) {
      try {
        await import(file)
      } catch (e) {
        const stack = String((e as Error).stack)
        if (!stack.includes('the tables are not handed down yet')) continue
        const frame = stack.split('\n').find((l) => l.includes(join(root, 'server')) && !l.includes(join('db', 'tables.ts')))
        failures.push(frame?.trim() ?? relative(root, file))
      }
    }
    vi.resetModules()
    expect([...new Set(failures)]).toEqual([])
  }, 120_000)
})
