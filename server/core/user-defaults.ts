import type { GatehouseConfig } from '../config/schema.js'
import type * as core from '../db/core-schema.js'
import type { UserRow } from './sessions.js'

/** The user columns features add (their columns.ts): every column of `user` that is not core. */
export type FeatureUserColumns = Omit<UserRow, keyof typeof core.user.$inferSelect>

/** What a new user holds in each feature column, for a config: the features' `xUserDefaults`, gathered. */
export type FeatureUserDefaults = (config: GatehouseConfig) => FeatureUserColumns

let provided: FeatureUserDefaults | null = null

/**
 * The composition floor (server/schema.ts) hands down, once, as it loads, the generated
 * `userFeatureDefaults` (server/features/columns.ts): core builds a new user from its own columns
 * plus these (users.ts unsavedUser), so it spells no feature's column and imports no feature.
 */
export function provideUserDefaults(defaults: FeatureUserDefaults): void {
  provided = defaults
}

/** A new user's feature columns under `config`, as the features declare them. */
export function featureUserDefaults(config: GatehouseConfig): FeatureUserColumns {
  if (!provided) throw new Error('the features’ user defaults are not handed down yet (server/schema.ts provides them as it loads)')
  return provided(config)
}
