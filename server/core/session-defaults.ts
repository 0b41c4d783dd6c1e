import type * as core from '../db/core-schema.js'
import type { session } from '../db/schema.js'

/** The session columns features add (their columns.ts): every column of `session` that is not core. */
export type FeatureSessionColumns = Omit<typeof session.$inferSelect, keyof typeof core.session.$inferSelect>

/** What a new session holds in each feature column: the features' `xSessionDefaults`, gathered. */
export type FeatureSessionDefaults = () => FeatureSessionColumns

let provided: FeatureSessionDefaults | null = null

/**
 * The composition floor (server/schema.ts) hands down, once, as it loads, the generated
 * `sessionFeatureDefaults` (server/features/columns.ts): core builds a new session from its own
 * columns plus these (sessions.ts `createSession`, `standInSession`), so adding a session column is
 * the feature's columns.ts alone; core spells no feature's column.
 */
export function provideSessionDefaults(defaults: FeatureSessionDefaults): void {
  provided = defaults
}

/** A new session's feature columns, as the features declare them. */
export function featureSessionDefaults(): FeatureSessionColumns {
  if (!provided) throw new Error('the features’ session defaults are not handed down yet (server/schema.ts provides them as it loads)')
  return provided()
}
