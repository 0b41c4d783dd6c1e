import type { z } from 'zod'
import { wholeConfigSchema } from './schema.js'
import { secretFields } from './secret.js'
import { urlPassword } from './url-password.js'

/**
 * Where the config holds secrets, read off the schema's `secret()` marks (config/secret.ts): the
 * one rule the config audit, its known file, the Settings view and its refusals all follow.
 *
 * A pattern is a list of path segments: an object key, `*` for any key of a record, `[]` for any
 * element of an array (`genericOAuth.config.[].clientSecret`).
 */
export type SecretPattern = readonly string[]

interface Def {
  type: string
  shape?: Record<string, z.ZodType>
  innerType?: z.ZodType
  element?: z.ZodType
  valueType?: z.ZodType
  in?: z.ZodType
  out?: z.ZodType
  options?: z.ZodType[]
  left?: z.ZodType
  right?: z.ZodType
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def

function collect(schema: z.ZodType, path: string[], out: string[][], seen: Set<z.ZodType>): void {
  if (secretFields.has(schema)) {
    out.push(path)
    return
  }
  if (seen.has(schema)) return
  seen.add(schema)
  const def = defOf(schema)
  const next = (child: z.ZodType | undefined, segment?: string) => {
    if (child) collect(child, segment === undefined ? path : [...path, segment], out, seen)
  }
  if (def.type === 'object') for (const [key, child] of Object.entries(def.shape ?? {})) next(child, key)
  else if (def.type === 'array') next(def.element, '[]')
  else if (def.type === 'record') next(def.valueType, '*')
  else if (def.type === 'pipe') {
    next(def.in)
    next(def.out)
  } else if (def.type === 'union') for (const option of def.options ?? []) next(option)
  else if (def.type === 'intersection') {
    next(def.left)
    next(def.right)
  } else next(def.innerType)
  seen.delete(schema)
}

/** The secret fields a schema declares, as patterns (deduplicated, sorted). */
export function secretPatternsOf(schema: z.ZodType): SecretPattern[] {
  const out: string[][] = []
  collect(schema, [], out, new Set())
  const unique = new Map(out.map((p) => [p.join('.'), p]))
  return [...unique.keys()].sort().map((key) => unique.get(key) as string[])
}

let patterns: SecretPattern[] | null = null
/** The secret fields of Gatehouse's config (every feature's sections included). */
export const configSecretPatterns = (): SecretPattern[] => {
  patterns ??= secretPatternsOf(wholeConfigSchema())
  return patterns
}

const segmentMatches = (pattern: string, segment: string): boolean =>
  pattern === segment || pattern === '*' || (pattern === '[]' && /^\d+$/.test(segment))

/** Whether `path` (dotted; an array element by its index or `[]`) is a secret field or lies inside one. */
export function isSecretPath(path: string | readonly string[], list: SecretPattern[] = configSecretPatterns()): boolean {
  const segments = typeof path === 'string' ? path.split('.') : path
  return list.some((p) => p.length <= segments.length && p.every((part, i) => segmentMatches(part, segments[i] as string)))
}

/** Whether some secret field lies at or below `path` (a patch of `path` may set a secret). */
export function holdsSecret(path: string | readonly string[], list: SecretPattern[] = configSecretPatterns()): boolean {
  const segments = typeof path === 'string' ? path.split('.') : path
  return list.some((p) => segments.every((segment, i) => i >= p.length || segmentMatches(p[i] as string, segment)))
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Leave the field out (mapSecrets' replacement). */
export const DROP: unique symbol = Symbol('drop')

/**
 * A copy of `value` with every secret field (by the schema's marks, in objects, records and arrays)
 * replaced by `replace(value, path)`, or left out when that returns DROP. Other values are kept as they are.
 */
export function mapSecrets(
  value: unknown,
  replace: (secretValue: unknown, path: string) => unknown,
  list: SecretPattern[] = configSecretPatterns(),
  path: string[] = [],
): unknown {
  if (path.length > 0 && isSecretPath(path, list)) return replace(value, path.join('.'))
  if (Array.isArray(value)) return value.map((v, i) => mapSecrets(v, replace, list, [...path, String(i)]))
  if (!isPlainObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) {
    const mapped = v === undefined ? undefined : mapSecrets(v, replace, list, [...path, key])
    if (mapped !== DROP) out[key] = mapped
  }
  return out
}

/**
 * The config as the renderer may see it: no secret field (config/secret.ts marks them; their
 * views have write-only fields), no URL's password (scheme://user:password@host → scheme://user@host).
 */
export function withoutSecrets(value: Record<string, unknown>): Record<string, unknown> {
  const urls = (v: unknown): unknown => {
    if (typeof v === 'string') return urlPassword(v)?.withoutPassword ?? v
    if (Array.isArray(v)) return v.map(urls)
    if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, urls(x)]))
    return v
  }
  return urls(mapSecrets(value, () => DROP)) as Record<string, unknown>
}
