/**
 * The Settings area, aggregated from the feature folders: every configuration key (SPEC §9 names)
 * in a section, with a human label and one line of help, declared by the feature that owns it
 * (its renderer folder's index.ts, renderer/src/features/panel-feature.ts) and listed here in the
 * order of renderer/src/features/index.ts. tests/features/settings/settings-fields.panel.test.ts walks the config
 * schema and proves that each leaf key has a field or is listed as edited elsewhere, and that each
 * folder declares only its own server feature's keys.
 */
import type { FieldKind, FieldSpec, PanelFeature, SectionId } from '../panel-feature'

export type { FieldKind, FieldSpec } from '../panel-feature'

export interface SectionSpec {
  id: string
  title: string
  description: string
  fields: FieldSpec[]
}

/** The sections, in order; the fields come from the features. */
const SECTION_TITLES: Array<Omit<SectionSpec, 'fields'> & { id: SectionId }> = [
  { id: 'application', title: 'Application and URLs', description: 'Which web apps may use this server, and how requests reach it.' },
  { id: 'sign-in', title: 'Sign-in and passwords', description: 'Email and password accounts, email verification and usernames.' },
  {
    id: 'multi-factor',
    title: 'Two-factor and passkeys',
    description: 'Second factors at sign-in: authenticator apps, mailed codes, backup codes and passkeys.',
  },
  {
    id: 'sessions',
    title: 'Sessions and cookies',
    description: 'How long people stay signed in, and the cookies that carry their session.',
  },
  { id: 'rate-limits', title: 'Rate limits and lockout', description: 'Defences against floods and password guessing.' },
  {
    id: 'users',
    title: 'Users and accounts',
    description: 'What people may do with their own account, and how provider accounts link to it.',
  },
  {
    id: 'organizations',
    title: 'Organizations',
    description: 'Teams of users who share an app: who creates them, limits and invitations.',
  },
  { id: 'admin', title: 'Admin roles', description: 'Who counts as an administrator, roles for new users, bans and impersonation.' },
  { id: 'mail', title: 'Mail', description: 'How outgoing mail presents itself. The SMTP server is set in the Email view.' },
]

/** The sections of the given features: each section's fields in the order of the feature list, `placement: 'last'` ones after. */
export function sectionsOf(features: readonly PanelFeature[]): SectionSpec[] {
  return SECTION_TITLES.map((section) => {
    const contributions = features.flatMap((f) => (f.settings ?? []).filter((c) => c.section === section.id))
    return {
      ...section,
      fields: [...contributions.filter((c) => c.placement !== 'last'), ...contributions.filter((c) => c.placement === 'last')].flatMap(
        (c) => c.fields,
      ),
    }
  })
}

/** Keys with a control in another view, or read only at start-up (each feature's `editedElsewhere`). */
export const editedElsewhereOf = (features: readonly PanelFeature[]): Record<string, string> =>
  Object.assign({}, ...features.map((f) => f.editedElsewhere ?? {}))

type Json = Record<string, unknown>
const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

export function getPath(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (isPlainObject(v) ? v[k] : undefined), value)
}

export function setPath(target: Json, path: string, value: unknown): void {
  const keys = path.split('.')
  let node = target
  for (const key of keys.slice(0, -1)) {
    if (!isPlainObject(node[key])) node[key] = {}
    node = node[key] as Json
  }
  node[keys[keys.length - 1] as string] = value
}

const humanize = (key: string) =>
  key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .replace(/^./, (c) => c.toUpperCase())

/**
 * Keys of the effective config that no section names (a feature added since): a generic field
 * each, so nothing is ever unreachable. The settings test keeps this list empty for known keys.
 */
export function uncoveredFields(effective: Json, features: readonly PanelFeature[]): FieldSpec[] {
  // A curated json field covers everything under it (records such as roles).
  const curated = new Set(sectionsOf(features).flatMap((s) => s.fields.map((f) => f.path)))
  const editedElsewhere = Object.keys(editedElsewhereOf(features))
  const elsewhere = (path: string) => editedElsewhere.some((p) => path === p || path.startsWith(`${p}.`))
  const out: FieldSpec[] = []
  const walk = (value: unknown, path: string) => {
    if (path && (curated.has(path) || elsewhere(path))) return
    if (isPlainObject(value) && Object.keys(value).length > 0 && !curated.has(path)) {
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k)
      return
    }
    if (!path) return
    const kind: FieldKind =
      typeof value === 'boolean'
        ? 'switch'
        : typeof value === 'number'
          ? 'number'
          : typeof value === 'string'
            ? 'text'
            : Array.isArray(value) && value.every((v) => typeof v === 'string')
              ? 'tags'
              : 'json'
    out.push({ path, label: path.split('.').map(humanize).join(' › '), help: `Configuration key ${path}.`, kind })
  }
  walk(effective, '')
  return out
}

/**
 * The change from `before` to `after` as a JSON Merge Patch (RFC 7386): a removed key becomes
 * `null`, so its default applies again; arrays replace whole.
 */
export function diff(before: unknown, after: unknown): unknown {
  if (after === undefined) return before === undefined ? undefined : null
  if (isPlainObject(before) && isPlainObject(after)) {
    const out: Json = {}
    for (const key of Object.keys(after)) {
      const d = diff(before[key], after[key])
      if (d !== undefined) out[key] = d
    }
    for (const key of Object.keys(before)) if (!(key in after)) out[key] = null
    return Object.keys(out).length ? out : undefined
  }
  return JSON.stringify(before) === JSON.stringify(after) ? undefined : after
}

/** The patch of one section: only its fields, each as a merge patch of its own value. */
export function sectionPatch(fields: FieldSpec[], before: Json, values: Record<string, unknown>): Json | undefined {
  const patch: Json = {}
  let changed = false
  for (const f of fields) {
    if (!(f.path in values)) continue
    const d = diff(getPath(before, f.path), values[f.path])
    if (d === undefined) continue
    setPath(patch, f.path, d)
    changed = true
  }
  return changed ? patch : undefined
}

/** A value as the review list shows it. */
export function describeValue(spec: FieldSpec, value: unknown): string {
  if (value === undefined || value === null || value === '') {
    if (spec.kind === 'tristate') return 'automatic'
    return spec.kind.startsWith('optional') ? 'not set' : 'empty'
  }
  if (spec.kind === 'inverted') return value ? 'off' : 'on'
  if (typeof value === 'boolean') return value ? 'on' : 'off'
  if (spec.kind === 'seconds' || spec.kind === 'optional-seconds') return `${value} s`
  if (Array.isArray(value)) return value.length ? value.join(', ') : 'none'
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** zod's wording → the panel's. */
const ZOD_WORDS: Array<[RegExp, (...m: string[]) => string]> = [
  [/^Too small: expected number to be >=?(-?[\d.]+)$/, (n) => `Must be at least ${n}`],
  [/^Too small: expected number to be >(-?[\d.]+)$/, (n) => `Must be more than ${n}`],
  [/^Too big: expected number to be <=?(-?[\d.]+)$/, (n) => `Must be at most ${n}`],
  [/^Too small: expected string to have >=?1 characters?$/, () => 'Must not be empty'],
  [/^Too small: expected string to have >=?(\d+) characters$/, (n) => `Must have at least ${n} characters`],
  [/^Too big: expected string to have <=?(\d+) characters$/, (n) => `Must have at most ${n} characters`],
  [/^Too small: expected array to have >=?(\d+) items?$/, (n) => `Needs at least ${n} ${n === '1' ? 'entry' : 'entries'}`],
  [/^Too big: expected array to have <=?(\d+) items$/, (n) => `Takes at most ${n} entries`],
  [/^Invalid input: expected int, received number$/, () => 'Must be a whole number'],
  [/^Invalid input: expected number, received (string|undefined|NaN|null)$/, () => 'Enter a number'],
  [/^Invalid input: expected string, received (undefined|null)$/, () => 'Enter a value'],
  [/^Invalid input: expected (\w+), received (\w+)$/, (want) => `Must be a ${want === 'boolean' ? 'switch value (true or false)' : want}`],
  [/^Invalid option: expected one of (.+)$/, (list) => `Must be one of ${list.replaceAll('|', ', ')}`],
  [/^Invalid input$/, () => 'Not an allowed value'],
  [/^Invalid string: (.+)$/, (rest) => rest],
  [/^Unrecognized keys?: (.+)$/, (keys) => `Unknown ${keys.includes(',') ? 'keys' : 'key'} ${keys}`],
]

/**
 * A configuration issue in the words of the field it concerns: zod's wording made plain, every
 * configuration key it names replaced by that field's label (and its value), and the part of a
 * list or JSON value it is about named first. `path` is the issue's dotted path, `field` the
 * field it belongs to; `labelOf` gives a key's label and current value when a field has one.
 */
export function humanIssue(
  issue: { path: string; message: string },
  field: FieldSpec,
  labelOf: (path: string) => { label: string; value?: unknown } | undefined,
): string {
  let text = issue.message.trim()
  for (const [pattern, say] of ZOD_WORDS) {
    const m = pattern.exec(text)
    if (m) {
      text = say(...m.slice(1))
      break
    }
  }
  text = text.replace(/\b[a-z][A-Za-z]*(?:\.[A-Za-z][A-Za-z0-9]*)+\b/g, (key) => {
    const known = labelOf(key)
    if (!known) return key
    const value = typeof known.value === 'number' || typeof known.value === 'string' ? ` (${known.value})` : ''
    return `“${known.label}”${value}`
  })
  text = text.charAt(0).toUpperCase() + text.slice(1)
  const rest = issue.path.startsWith(`${field.path}.`) ? issue.path.slice(field.path.length + 1) : ''
  if (!rest) return text
  const [first, ...deeper] = rest.split('.')
  // A list entry by its position; a JSON value by its keys.
  const where = /^\d+$/.test(first ?? '') && field.kind !== 'json' ? `Entry ${Number(first) + 1}` : [first, ...deeper].join(' › ')
  return `${where}: ${text}`
}
