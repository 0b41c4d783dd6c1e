import { queryAuditEvents } from './audit.js'
import { changedBy, type ConfigChange, diffLeaves } from './config-audit.js'
import type { ConfigConflict } from './config-conflicts.js'
import type { AuthContext } from './context.js'

/**
 * Saves of a managed object (a SAML service provider, an OIDC client, an organization...) that
 * never undo another admin's change (issue 50 §1), the rule config-conflicts.ts holds for the
 * configuration: a view sends the fields it changed and, in `base`, each as it read them (field →
 * value, as the object's panel view shows it). A field whose stored value is no longer the one read
 * was changed by someone else meanwhile: the save is refused (`StaleSave`, which the panel answers
 * 409 CONFLICT) with who, when and their value, from the object's audit trail, where each change
 * records the old and new value of every non-secret field it changed (`objectChanges`). Fields the
 * patch changes without naming them in `base` are not checked (the CLI, scripts: as before).
 *
 * Call `refuseStale` inside the transaction that reads the object and writes it, so two saves
 * cannot both pass the check.
 */

type Json = Record<string, unknown>
const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A save made over someone else's change: nothing was saved. */
export class StaleSave extends Error {
  constructor(readonly conflicts: ConfigConflict[]) {
    super(`${conflicts.map((c) => c.path).join(', ')} changed since read`)
    this.name = 'StaleSave'
  }
}

/** Where an object's changes are recorded: its audit events (a type prefix such as `saml.sp-`) about it (`target`). */
export interface ObjectTrail {
  type: string
  target: string
}

/** Equal as JSON whatever the key order; absent is null. */
const canonical = (v: unknown): string =>
  JSON.stringify(v ?? null, (_k, x: unknown) =>
    isPlainObject(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  )

/** The fields of `base` the patch changes whose current value is no longer the one read. */
export function staleObjectFields(current: Json, patch: Json, base: Json | undefined): string[] {
  if (!base) return []
  return Object.keys(base).filter((field) => patch[field] !== undefined && canonical(current[field]) !== canonical(base[field]))
}

/** How many of an object's latest events are searched for the last change of a field. */
const RECENT_EVENTS = 100

/**
 * Who last changed a field of an object, and when: the newest event of its trail whose `changes`
 * (or, in older events, `fields`) name it; an event that names none (its creation, a change made
 * by the application itself through registration management) counts for every field.
 */
export async function lastObjectChange(ctx: AuthContext, trail: ObjectTrail, field: string): Promise<{ by: string; at: number | null }> {
  const { events } = await queryAuditEvents(ctx, { type: `${trail.type}*`, target: trail.target }, { limit: RECENT_EVENTS })
  for (const event of events) {
    const detail = (typeof event.detail === 'string' ? JSON.parse(event.detail) : event.detail) as {
      changes?: ConfigChange[]
      fields?: string[]
    } | null
    const named = detail?.changes?.map((c) => c.key) ?? detail?.fields
    if (named && !named.includes(field)) continue
    return changedBy(ctx, event)
  }
  return { by: 'someone', at: null }
}

/**
 * Refuses a save (`patch`, with `base`: each changed field as the view read it) of the object whose
 * current view is `current`, when a field it changes was changed by someone else since it was read.
 * Who and when: from the object's trail, or (an object kept in the configuration, as a mail
 * template) the function that knows.
 */
export async function refuseStale(
  ctx: AuthContext,
  trail: ObjectTrail | ((field: string) => Promise<{ by: string; at: number | null }>),
  current: Json,
  patch: Json,
  base: Json | undefined,
): Promise<void> {
  const stale = staleObjectFields(current, patch, base)
  if (stale.length === 0) return
  const who = typeof trail === 'function' ? trail : (field: string) => lastObjectChange(ctx, trail, field)
  const conflicts: ConfigConflict[] = []
  for (const path of stale) conflicts.push({ path, theirs: current[path] ?? null, ...(await who(path)) })
  throw new StaleSave(conflicts)
}

/**
 * The fields a change of an object changed, each with its old and new value as the audit log holds
 * them (config-audit's form: long values cut), `ignore` (timestamps) left out. Pass views without
 * secrets: a secret is named by its own event (`(secret)`), never written.
 */
export function objectChanges(before: Json, after: Json, { ignore = [] }: { ignore?: string[] } = {}): ConfigChange[] {
  const fields = (o: Json) => Object.fromEntries(Object.entries(o).filter(([k]) => !ignore.includes(k)))
  return diffLeaves(fields(before), fields(after))
}
