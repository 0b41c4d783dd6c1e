import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { configSchema } from '../../server/config/schema.js'
import {
  diff,
  EDITED_ELSEWHERE,
  getPath,
  SECTIONS,
  sectionPatch,
  uncoveredFields,
} from '../../renderer/src/features/settings/settings-fields.js'

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
    expect(uncoveredFields(effective).map((f) => f.path)).toEqual([])
    // A key a new feature adds still gets a generic control.
    expect(uncoveredFields({ ...effective, newFeature: { someOption: 'x' } }).map((f) => f.path)).toEqual(['newFeature.someOption'])
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
