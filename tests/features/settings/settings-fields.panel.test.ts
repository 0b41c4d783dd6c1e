import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { panelFeatures } from '../../../renderer/src/features/index.js'
import {
  diff,
  editedElsewhereOf,
  getPath,
  humanIssue,
  sectionPatch,
  sectionsOf,
  uncoveredFields,
} from '../../../renderer/src/features/settings/settings-fields.js'
import type { Feature } from '../../../server/feature.js'
import { configSchema } from '../../../server/config-schema.js'
import { features as serverFeatures } from '../../../server/features/index.js'

const SECTIONS = sectionsOf(panelFeatures)
const EDITED_ELSEWHERE = editedElsewhereOf(panelFeatures)
const rendererFeatures = join(import.meta.dirname, '../../../renderer/src/features')
const serverFeaturesDir = join(import.meta.dirname, '../../../server/features')

/** Unwraps default/prefault/optional/nullable/pipe down to the schema that holds the shape. */
function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema as unknown as { _zod: { def: { type: string; innerType?: z.ZodType; in?: z.ZodType } } }
  for (;;) {
    const def = s._zod.def
    if (def.innerType && ['default', 'prefault', 'optional', 'nullable', 'nonoptional', 'readonly', 'catch'].includes(def.type))
      s = def.innerType as never
    else if (def.type === 'pipe' && def.in) s = def.in as never
    else return s as unknown as z.ZodType
  }
}

/** Every leaf key of the config schema: object shapes are walked, anything else (records, arrays, scalars) is a leaf. */
function leafKeys(schema: z.ZodType, prefix = ''): string[] {
  const inner = unwrap(schema) as unknown as { _zod: { def: { type: string; shape?: Record<string, z.ZodType> } } }
  if (inner._zod.def.type === 'object' && inner._zod.def.shape) {
    return Object.entries(inner._zod.def.shape).flatMap(([k, v]) => leafKeys(v, prefix ? `${prefix}.${k}` : k))
  }
  return [prefix]
}

const fields = SECTIONS.flatMap((s) => s.fields)
const underElsewhere = (path: string) => Object.keys(EDITED_ELSEWHERE).some((p) => path === p || path.startsWith(`${p}.`))

describe('settings fields', () => {
  const leaves = leafKeys(configSchema)

  it('walks the whole schema', () => {
    // A sanity floor: the walk reaches nested keys, not just the top level.
    expect(leaves).toContain('security.accountLockout.maxFailures')
    expect(leaves).toContain('advanced.ipAddress.trustedProxies')
    expect(leaves).toContain('socialProviders.github.clientId')
    expect(leaves.length).toBeGreaterThan(100)
  })

  it('every config key has a control in a section or is listed as edited elsewhere', () => {
    const missing = leaves.filter((path) => !fields.some((f) => f.path === path) && !underElsewhere(path))
    expect(missing).toEqual([])
  })

  it('every control names a real key, once, with a human label and one line of help', () => {
    const paths = fields.map((f) => f.path)
    expect(paths.filter((p, i) => paths.indexOf(p) !== i)).toEqual([])
    for (const f of fields) {
      expect(leaves, f.path).toContain(f.path)
      // No generated labels such as "Change Email - Send Change Email Verification".
      expect(f.label, f.path).not.toMatch(/ - |›|[a-z][A-Z]/)
      expect(f.help.length, f.path).toBeGreaterThan(5)
      expect(f.help, f.path).not.toContain('\n')
    }
  })

  it('every section of the issue is there, in order', () => {
    expect(SECTIONS.map((s) => s.title)).toEqual([
      'Application and URLs',
      'Sign-in and passwords',
      'Two-factor and passkeys',
      'Sessions and cookies',
      'Rate limits and lockout',
      'Users and accounts',
      'Organizations',
      'Admin roles',
      'Mail',
    ])
  })

  it('the defaults leave no key without a section (the generic fallback stays empty)', () => {
    const effective = configSchema.parse({}) as Record<string, unknown>
    expect(uncoveredFields(effective, panelFeatures).map((f) => f.path)).toEqual([])
    // A key a new feature adds still gets a generic control.
    expect(uncoveredFields({ ...effective, newFeature: { someOption: 'x' } }, panelFeatures).map((f) => f.path)).toEqual([
      'newFeature.someOption',
    ])
  })

  it('a section patch holds only that section, with null for a cleared optional key', () => {
    const effective = configSchema.parse({ organization: { organizationLimit: 3 } }) as Record<string, unknown>
    const org = SECTIONS.find((s) => s.id === 'organizations')!
    const values = Object.fromEntries(org.fields.map((f) => [f.path, getPath(effective, f.path)]))
    expect(sectionPatch(org.fields, effective, values)).toBeUndefined()
    values['organization.organizationLimit'] = undefined
    values['organization.membershipLimit'] = 5
    expect(sectionPatch(org.fields, effective, values)).toEqual({ organization: { organizationLimit: null, membershipLimit: 5 } })
    expect(diff({ a: { window: 1, max: 2 } }, {})).toEqual({ a: null })
  })
})

/** Issue 26 §2: a capability is one folder and one line, in the panel too. */
describe('panel features', () => {
  const under = (path: string, key: string) => path === key || path.startsWith(`${key}.`)
  /** Each server feature folder's config keys, by folder name. */
  const serverConfigByFolder = async (): Promise<Map<string, string[]>> => {
    const out = new Map<string, string[]>()
    for (const folder of readdirSync(serverFeaturesDir, { withFileTypes: true })) {
      if (!folder.isDirectory()) continue
      const mod = (await import(join(serverFeaturesDir, folder.name, 'index.ts'))) as Record<string, Feature>
      const feature = Object.values(mod).find((v) => serverFeatures.includes(v))
      out.set(folder.name, Object.keys(feature?.config ?? {}))
    }
    return out
  }

  it('every renderer feature folder is in the list once, under its folder name, with an index.ts', () => {
    const folders = readdirSync(rendererFeatures, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
    for (const folder of folders) expect(existsSync(join(rendererFeatures, folder, 'index.ts')), folder).toBe(true)
    expect(panelFeatures.map((f) => f.name).sort()).toEqual(folders.sort())
  })

  it('each folder declares only the keys of its own server feature (or core keys when that feature has no config)', async () => {
    const byFolder = await serverConfigByFolder()
    const allFeatureKeys = [...byFolder.values()].flat()
    for (const feature of panelFeatures) {
      const own = byFolder.get(feature.name) ?? []
      const keys = [...(feature.settings ?? []).flatMap((c) => c.fields.map((f) => f.path)), ...Object.keys(feature.editedElsewhere ?? {})]
      for (const key of keys) {
        if (own.length)
          expect(
            own.some((k) => under(key, k)),
            `${feature.name}: ${key}`,
          ).toBe(true)
        else
          expect(
            allFeatureKeys.some((k) => under(key, k)),
            `${feature.name}: ${key} belongs to another feature`,
          ).toBe(false)
      }
    }
  })

  it('the navigation is the features’ views, in list order, each address once', () => {
    const views = panelFeatures.flatMap((f) => f.views ?? [])
    const names = views.map((v) => v.name)
    expect(names).toEqual([
      'overview',
      'users',
      'organizations',
      'providers',
      'email',
      'audit',
      'network',
      'backup',
      'api-keys',
      'signing-keys',
      'sso',
      'protected-apps',
      'ldap',
      'saml-apps',
      'settings',
      'metrics',
    ])
    const addresses = [...names, ...views.flatMap((v) => v.aliases ?? [])]
    expect(new Set(addresses).size).toBe(addresses.length)
  })

  it('a new feature is one folder and one line: its view and its fields appear', () => {
    const extra = {
      name: 'example',
      views: [{ name: 'example', label: 'Example', icon: () => null, Page: panelFeatures[0]!.views![0]!.Page }],
      settings: [
        {
          section: 'sign-in' as const,
          fields: [{ path: 'example.enabled', label: 'Example sign-in', help: 'Turns it on.', kind: 'switch' as const }],
        },
      ],
    }
    const sections = sectionsOf([...panelFeatures, extra])
    expect(sections.find((s) => s.id === 'sign-in')!.fields.map((f) => f.path)).toContain('example.enabled')
    expect(uncoveredFields({ example: { enabled: true } }, [...panelFeatures, extra])).toEqual([])
  })
})

describe('issues in the words of the field (issue 31 §3)', () => {
  const all = SECTIONS.flatMap((s) => s.fields)
  const field = (path: string) => all.find((f) => f.path === path)!
  const labelOf = (path: string) => {
    const f = all.find((x) => x.path === path)
    return f && { label: f.label, value: path === 'emailAndPassword.maxPasswordLength' ? 128 : undefined }
  }
  it.each([
    [
      'emailAndPassword.minPasswordLength',
      'must not exceed emailAndPassword.maxPasswordLength',
      'Must not exceed “Longest password” (128)',
    ],
    ['rateLimit.max', 'Too small: expected number to be >=1', 'Must be at least 1'],
    ['rateLimit.max', 'Invalid input: expected int, received number', 'Must be a whole number'],
    ['rateLimit.max', 'Invalid input: expected number, received string', 'Enter a number'],
    ['mail.appName', 'Too small: expected string to have >=1 characters', 'Must not be empty'],
    ['rateLimit.storage', 'Invalid option: expected one of "memory"|"database"', 'Must be one of "memory", "database"'],
    ['disabledPaths.0', 'Invalid string: must start with "/"', 'Entry 1: Must start with "/"'],
    ['rateLimit.customRules./x.window', 'Too small: expected number to be >=1', '/x › window: Must be at least 1'],
  ])('%s: %s', (path, message, expected) => {
    const owner = all.find((f) => path === f.path || path.startsWith(`${f.path}.`))!
    expect(humanIssue({ path, message }, owner, labelOf)).toBe(expected)
    expect(humanIssue({ path, message }, owner, labelOf)).not.toMatch(/[a-z]+\.[a-z]+[A-Z]/)
  })
  it('names the field it belongs to', () => {
    expect(field('emailAndPassword.minPasswordLength').label).toBe('Shortest password')
  })
})
