import type { FeatureDependencies } from '../../feature.js'

/** What Forward auth imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'groups/person.ts': "its rules and Remote-* headers take the person from the faces' one record",
  'groups/names.ts': "a rule's group names are read by the one group-name rule",
  'two-factor/store.ts': "a rule requiring a second factor reads two-factor's session marker",
}
