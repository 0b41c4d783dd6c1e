/**
 * Each feature declares its config sections, tables and error catalogue in its defineFeature
 * (server/feature.ts); the aggregations bin/gen-features.js writes from the folders listed in
 * server/features/index.ts (features/config-sections.ts, features/columns.ts, features/tables.ts,
 * features/panel-contracts.ts, db/feature-bindings.ts) must be current and hold exactly what the features declare, so a
 * feature's folder plus its line in the list stays the one place it is described.
 * Fails when a feature adds a config.ts, schema.ts or errors.ts without declaring it, or when a
 * root config section or table belongs to no feature and is not core.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ZodType } from 'zod'
import { getTableConfig } from 'drizzle-orm/sqlite-core'
import { configSchema } from '../../server/config-schema.js'
import * as coreTables from '../../server/db/core-schema.js'
import { schema } from '../../server/schema.js'
import { features } from '../../server/features/index.js'
// @ts-expect-error: a plain JavaScript build script without declarations
import { generatedFiles, listedFolders } from '../../bin/gen-features.js'

const featuresDir = join(import.meta.dirname, '../../server/features')

/** Root config sections that belong to the core, not to a feature. */
const CORE_SECTIONS = [
  'appName',
  'basePath',
  'trustedOrigins',
  'disabledPaths',
  'verification',
  'identity',
  'mail',
  'session',
  'database',
  'secondaryStorage',
  'rateLimit',
  'user',
  'security',
  'signUp',
  'log',
  'advanced',
]

/** A zod schema with its defaults/prefaults/optional wrappers removed, one layer at a time. */
function unwrapped(schema: ZodType): ZodType[] {
  const layers: ZodType[] = [schema]
  for (let s = schema; ; ) {
    const inner = (s as unknown as { _zod: { def: { innerType?: ZodType } } })._zod.def.innerType
    if (!inner) return layers
    layers.push(inner)
    s = inner
  }
}

function sectionAt(path: string): ZodType | undefined {
  let node: ZodType = configSchema
  for (const key of path.split('.')) {
    const object = unwrapped(node).find((s) => (s as unknown as { shape?: unknown }).shape) as unknown as
      | { shape: Record<string, ZodType> }
      | undefined
    const next = object?.shape[key]
    if (!next) return undefined
    node = next
  }
  return node
}

describe('feature declarations', () => {
  it('the generated aggregations are what the listed feature folders say (node bin/gen-features.js)', async () => {
    const files = (await generatedFiles()) as Record<string, string>
    expect(Object.keys(files).length).toBe(9)
    for (const [path, text] of Object.entries(files)) {
      const onDisk = readFileSync(join(import.meta.dirname, '../..', path), 'utf8')
      expect({ path, current: onDisk === text }).toEqual({ path, current: true })
    }
    // The generator reads the list the composition root uses, in its order.
    expect(listedFolders()).toEqual(features.map((f) => f.id))
  })

  it("the CLI's feature commands are each commands.ts's, gathered once, their names unique and no core command's", async () => {
    const { featureCommands } = await import('../../server/features/commands.js')
    const declared: unknown[] = []
    for (const folder of listedFolders()) {
      const file = join(featuresDir, folder, 'commands.ts')
      if (existsSync(file)) declared.push(...((await import(file)) as { commands: unknown[] }).commands)
    }
    expect(featureCommands).toEqual(declared)
    const names = featureCommands.map((command) => command.name)
    expect(new Set(names).size).toBe(names.length)
    for (const core of ['serve', 'user', 'reload', 'migrate', 'help', 'version']) expect(names).not.toContain(core)
  })

  it("every dependency a feature's dependencies.ts declares is imported by the folder (no stale allowance)", () => {
    const declared = JSON.parse(readFileSync(join(featuresDir, 'dependencies.json'), 'utf8')) as Record<string, Record<string, string>>
    expect(Object.keys(declared).length).toBeGreaterThan(10)
    for (const [folder, targets] of Object.entries(declared)) {
      const dir = join(featuresDir, folder)
      const imported = new Set<string>()
      for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
        if (!entry.isFile() || !entry.name.endsWith('.ts')) continue
        const text = readFileSync(join(entry.parentPath, entry.name), 'utf8')
        for (const [, specifier] of text.matchAll(/from '(\.[^']+)\.js'/g))
          imported.add(`${relative(featuresDir, resolve(entry.parentPath, specifier as string))}.ts`)
      }
      for (const target of Object.keys(targets)) {
        const used = [...imported].some((path) => path === target || path.startsWith(`${target}/`))
        expect({ folder, target, used }).toEqual({ folder, target, used: true })
      }
    }
  })

  it("the checks across sections are each feature's config.ts configChecks, run on every parse of the whole config", async () => {
    const { featureConfigChecks } = await import('../../server/features/config-sections.js')
    const declared: unknown[] = []
    for (const folder of listedFolders()) {
      const file = join(featuresDir, folder, 'config.ts')
      if (existsSync(file)) {
        const { configChecks } = (await import(file)) as { configChecks?: unknown }
        if (configChecks) declared.push(configChecks)
      }
    }
    expect(featureConfigChecks).toEqual(declared)
    const refused = configSchema.safeParse({
      emailAndPassword: { minPasswordLength: 20, maxPasswordLength: 10 },
      username: { minUsernameLength: 9, maxUsernameLength: 4 },
      ldap: { searchRoles: ['auditor'] },
    })
    expect(refused.success).toBe(false)
    expect(refused.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['emailAndPassword.minPasswordLength', 'must not exceed emailAndPassword.maxPasswordLength'],
      ['username.minUsernameLength', 'must not exceed username.maxUsernameLength'],
      ['ldap.searchRoles', '"auditor" is not a known role (built-in, or declared in admin.roles)'],
    ])
    expect(configSchema.safeParse({ ldap: { searchRoles: ['auditor'] }, admin: { roles: { auditor: {} } } }).success).toBe(true)
  })

  it("a feature's declared config is its config.ts `configSections`, the object the generator mounts", async () => {
    for (const f of features) {
      const file = join(featuresDir, f.id, 'config.ts')
      if (!existsSync(file)) continue
      const { configSections } = (await import(file)) as { configSections?: unknown }
      expect({ id: f.id, same: f.config === configSections }).toEqual({ id: f.id, same: true })
    }
  })

  it('every config section a feature declares is the one config/schema.ts mounts at that path', () => {
    const declared = features.flatMap((f) => Object.entries(f.config ?? {}).map(([path, schema]) => ({ id: f.id, path, schema })))
    expect(declared.length).toBeGreaterThan(10)
    for (const { id, path, schema } of declared) {
      const mounted = sectionAt(path)
      expect({ id, path, mounted: mounted !== undefined }).toEqual({ id, path, mounted: true })
      expect({ id, path, same: unwrapped(mounted as ZodType).includes(schema) || unwrapped(schema).includes(mounted as ZodType) }).toEqual({
        id,
        path,
        same: true,
      })
    }
  })

  it('every root config section is core or declared by exactly one feature', () => {
    const owners = new Map<string, string[]>()
    for (const f of features)
      for (const path of Object.keys(f.config ?? {}))
        owners.set(path.split('.')[0] as string, [...(owners.get(path.split('.')[0] as string) ?? []), f.id])
    for (const key of Object.keys(configSchema.shape)) {
      const owned = owners.get(key)?.length ?? 0
      const core = CORE_SECTIONS.includes(key)
      // `user` is core (additionalFields) with feature sections inside it (user.changeEmail, user.deleteUser).
      expect({ key, accounted: core || owned === 1 }).toEqual({ key, accounted: true })
    }
  })

  it('server/schema.ts holds exactly the core tables and the tables the features declare', () => {
    const declared = new Map<unknown, string>()
    for (const f of features) for (const [name, table] of Object.entries(f.tables ?? {})) declared.set(table, `${f.id}.${name}`)
    // user and session are core-schema.ts's, built with the features' columns (checked below).
    const core = new Set<unknown>([...Object.values(coreTables), schema.user, schema.session])
    for (const [name, table] of Object.entries(schema)) {
      expect({ name, accounted: core.has(table) || declared.has(table) }).toEqual({ name, accounted: true })
    }
    const mounted = new Set(Object.values(schema))
    for (const [table, where] of declared) expect({ where, mounted: mounted.has(table as never) }).toEqual({ where, mounted: true })
  })

  it('every column of user and session is core or declared by exactly one feature, under the same property', () => {
    const CORE_COLUMNS = {
      user: ['id', 'name', 'email', 'emailVerified', 'image', 'createdAt', 'updatedAt', 'additionalFields'],
      session: ['id', 'token', 'userId', 'expiresAt', 'ipAddress', 'userAgent', 'createdAt', 'updatedAt'],
    }
    for (const table of ['user', 'session'] as const) {
      const owners = new Map<string, string[]>()
      for (const f of features)
        for (const [key, builder] of Object.entries(f.columns?.[table] ?? {})) {
          owners.set(key, [...(owners.get(key) ?? []), f.id])
          // The builder the feature declares is the one the table was built from (same SQL name).
          const column = (schema[table] as unknown as Record<string, { name: string }>)[key]
          expect({ table, key, name: column?.name }).toEqual({ table, key, name: (builder as { config: { name: string } }).config.name })
        }
      for (const column of getTableConfig(schema[table]).columns) {
        const key = Object.entries(schema[table]).find(([, c]) => c === column)?.[0] as string
        const owned = owners.get(key) ?? []
        expect({ table, key, accounted: CORE_COLUMNS[table].includes(key) ? owned.length === 0 : owned.length === 1 }).toEqual({
          table,
          key,
          accounted: true,
        })
      }
    }
  })

  it("every feature folder's config.ts, schema.ts, columns.ts and errors.ts is declared by its feature", () => {
    const byFolder = new Map(features.map((f) => [f.id, f]))
    const folders = readdirSync(featuresDir, { withFileTypes: true }).filter((d) => d.isDirectory())
    expect(folders.length).toBe(features.length)
    for (const folder of folders) {
      const dir = join(featuresDir, folder.name)
      // Feature ids are better-auth's plugin ids where one exists; the folder name is the same string.
      const feature = byFolder.get(folder.name)
      expect({ folder: folder.name, listed: feature !== undefined }).toEqual({ folder: folder.name, listed: true })
      const has = (file: string) => existsSync(join(dir, file))
      expect({
        folder: folder.name,
        config: has('config.ts') === (feature?.config !== undefined),
        tables: has('schema.ts') === (feature?.tables !== undefined),
        errors: has('errors.ts') === (feature?.errors !== undefined),
        columns: has('columns.ts') === (feature?.columns !== undefined),
      }).toEqual({ folder: folder.name, config: true, tables: true, errors: true, columns: true })
    }
  })
})
