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

/** How the wire treats a feature's user column (its columns.ts `xUserFieldAccess`); undeclared: public. */
export type UserFieldAccess = 'protected' | 'shown-when-set'

let access: Readonly<Record<string, UserFieldAccess>> | null = null
let byAccess: { protected: string[]; shownWhenSet: string[] } | null = null

/** The composition floor hands down the gathered `userFeatureFieldAccess`, as it does the defaults. */
export function provideUserFieldAccess(declared: Readonly<Record<string, UserFieldAccess>>): void {
  access = declared
  byAccess = null
}

/**
 * The features' user columns by how the wire treats them: `protected` (a client never sets it on
 * itself: FIELD_NOT_ALLOWED) and `shownWhenSet` (a user shows it only while it holds a value).
 */
export function userFieldAccess(): { protected: string[]; shownWhenSet: string[] } {
  if (!access) throw new Error('the features’ user field access is not handed down yet (server/schema.ts provides it as it loads)')
  if (!byAccess) {
    const entries = Object.entries(access)
    byAccess = {
      protected: entries.filter(([, a]) => a === 'protected').map(([name]) => name),
      shownWhenSet: entries.filter(([, a]) => a === 'shown-when-set').map(([name]) => name),
    }
  }
  return byAccess
}
