/**
 * What a view that edits configuration saves: only the fields the admin changed, each with the
 * value the view read (`base`), so `settings.update` refuses the save (409 CONFLICT, naming who
 * changed which field and when) when another admin changed one of them since, instead of a stale
 * view silently putting their change back; the fields this admin left alone are not sent at all.
 */

type Json = Record<string, unknown>
const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The value at a dotted path. */
export function valueAt(value: unknown, path: string): unknown {
  let here = value
  for (const key of path.split('.')) {
    if (!isPlainObject(here)) return undefined
    here = here[key]
  }
  return here
}

/** Equal as a save sees it: absent and null alike (a null in a patch removes the key). */
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)

/**
 * From the values a form would save (dotted path → value; null removes the key) and the effective
 * configuration the view read: the patch of the changed ones and their read values; null when
 * nothing changed.
 */
export function changedFields(values: Record<string, unknown>, read: Json | undefined): { patch: Json; base: Json } | null {
  const patch: Json = {}
  const base: Json = {}
  for (const [path, value] of Object.entries(values)) {
    const before = valueAt(read, path)
    if (same(before, value)) continue
    base[path] = before ?? null
    const keys = path.split('.')
    let here = patch
    for (const key of keys.slice(0, -1)) {
      if (!isPlainObject(here[key])) here[key] = {}
      here = here[key] as Json
    }
    here[keys[keys.length - 1] as string] = value
  }
  return Object.keys(base).length ? { patch, base } : null
}
