/**
 * A feature's user columns live in the feature (issue 39): its columns.ts declares the columns and
 * what a new user holds in them (`xUserDefaults`); core builds a new user from the core columns plus
 * those defaults (users.ts unsavedUser), and the import builds its rows the same way. Core spelling
 * a feature's column while building a user, or the import spelling a default of its own, fails here.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import '../../server/config-schema.js' // the whole config schema, handed down to the store (as gatehouse.ts does)
import '../../server/schema.js' // the tables and the features' new-user defaults, handed down likewise
import { openToolContext } from '../../server/core/tool-context.js'
import { unsavedUser } from '../../server/core/users.js'

const serverDir = join(import.meta.dirname, '../../server')
const featuresDir = join(serverDir, 'features')

interface Declared {
  folder: string
  columns: string[]
  defaults: ((config: unknown) => Record<string, unknown>) | undefined
}

async function declaredUserColumns(): Promise<Declared[]> {
  const out: Declared[] = []
  for (const entry of readdirSync(featuresDir, { withFileTypes: true })) {
    const folder = entry.name
    if (!entry.isDirectory() || !existsSync(join(featuresDir, folder, 'columns.ts'))) continue
    const module = (await import(join(featuresDir, folder, 'columns.ts'))) as Record<string, unknown>
    const columns = Object.entries(module).flatMap(([name, value]) =>
      name.endsWith('Columns') ? Object.keys((value as { user?: object }).user ?? {}) : [],
    )
    const defaults = Object.entries(module).find(([name]) => name.endsWith('UserDefaults'))?.[1] as Declared['defaults']
    if (columns.length > 0 || defaults) out.push({ folder, columns, defaults })
  }
  return out
}

/** The text of `export … name` up to its closing brace at the start of a line. */
function declaration(source: string, start: RegExp): string {
  const at = source.search(start)
  expect(at, `${start} in the source`).toBeGreaterThanOrEqual(0)
  const end = source.indexOf('\n}\n', at)
  return source.slice(at, end + 2)
}

const named = (text: string, column: string) => new RegExp(`\\b${column}\\b`).test(text)

describe("a feature's user columns", () => {
  it('every feature that adds user columns declares a new user’s value for each of them, and only for them', async () => {
    const declared = await declaredUserColumns()
    expect(declared.map((d) => d.folder).sort()).toEqual(['admin', 'anonymous', 'last-login-method', 'two-factor', 'username'])
    const config = { admin: { defaultRole: 'user' }, anonymous: { enabled: false } }
    for (const { folder, columns, defaults } of declared) {
      expect(defaults, `${folder}/columns.ts: xUserDefaults`).toBeTypeOf('function')
      expect({ folder, keys: Object.keys(defaults?.(config) ?? {}).sort() }).toEqual({ folder, keys: [...columns].sort() })
    }
  })

  it('core names no feature column where it builds a user (users.ts NewUserInput, unsavedUser, insertUser)', async () => {
    const columns = (await declaredUserColumns()).flatMap((d) => d.columns)
    expect(columns).toEqual(expect.arrayContaining(['role', 'banned', 'twoFactorEnabled', 'isAnonymous', 'username']))
    const source = readFileSync(join(serverDir, 'core/users.ts'), 'utf8')
    const construction = [
      declaration(source, /^export type NewUserInput/m),
      declaration(source, /^export function unsavedUser/m),
      declaration(source, /^export async function insertUser/m),
    ].join('\n')
    expect(columns.filter((column) => named(construction, column))).toEqual([])
    // Nor does it read a feature's config to make a user.
    expect(construction).not.toMatch(/config\(\)\.(admin|anonymous|twoFactor|username|lastLoginMethod)\b/)
  })

  it('core names no feature column where it shows a user or guards one (toPublicUser, readAdditionalFields): columns.ts declares how (xUserFieldAccess)', async () => {
    const columns = (await declaredUserColumns()).flatMap((d) => d.columns)
    const source = readFileSync(join(serverDir, 'core/users.ts'), 'utf8')
    const shown = [declaration(source, /^export function toPublicUser/m), declaration(source, /^export type PublicUser/m)].join('\n')
    expect(columns.filter((column) => named(shown, column))).toEqual([])
    expect(source).not.toMatch(/PROTECTED_FIELDS|'banExpires'|'isAnonymous'|'lastLoginMethod'/)
  })

  it('the import builds its rows with unsavedUser, naming only the columns a users file gives (role, username)', async () => {
    const columns = (await declaredUserColumns()).flatMap((d) => d.columns)
    const source = readFileSync(join(serverDir, 'features/import/users.ts'), 'utf8')
    const validate = declaration(source, /^function validate\(/m)
    expect(validate).toMatch(/unsavedUser\(ctx,/)
    const fromFile = ['role', 'username', 'displayUsername']
    expect(columns.filter((column) => !fromFile.includes(column) && named(validate, column))).toEqual([])
  })
})

describe('unsavedUser', () => {
  let dir: string | undefined
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
    dir = undefined
  })

  async function contextWith(config: Record<string, unknown>) {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-user-columns-'))
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config))
    const opened = await openToolContext(dir, { env: { GATEHOUSE_SECRET: 'a'.repeat(32) }, log: () => {} })
    if ('error' in opened) throw new Error(opened.error)
    return opened
  }

  it('gives every feature column its declared default: the configured role, no ban, isAnonymous false while anonymous is on', async () => {
    const { ctx, close } = await contextWith({ admin: { defaultRole: 'admin' }, anonymous: { enabled: true } })
    try {
      const row = unsavedUser(ctx, { name: 'Ann', email: 'Ann@Example.com' })
      expect(row).toMatchObject({
        name: 'Ann',
        email: 'ann@example.com',
        emailVerified: false,
        image: null,
        username: null,
        displayUsername: null,
        role: 'admin',
        banned: false,
        banReason: null,
        banExpires: null,
        twoFactorEnabled: false,
        lastLoginMethod: null,
        isAnonymous: false,
        additionalFields: null,
      })
    } finally {
      await close()
    }
  })

  it('keeps what the creator gives (a null or absent value takes the default); isAnonymous is null while anonymous is off', async () => {
    const { ctx, close } = await contextWith({})
    try {
      const row = unsavedUser(ctx, { name: 'Bo', email: 'bo@example.com', role: null, username: 'bo', displayUsername: 'Bo' })
      expect(row).toMatchObject({ role: 'user', username: 'bo', displayUsername: 'Bo', isAnonymous: null })
      // Fields that are not user columns (a sign-up's password) never reach the row.
      const withExtra = unsavedUser(ctx, { name: 'Cy', email: 'cy@example.com', isAnonymous: true, ...{ password: 'secret-value' } })
      expect(withExtra.isAnonymous).toBe(true)
      expect(Object.values(withExtra)).not.toContain('secret-value')
    } finally {
      await close()
    }
  })
})
