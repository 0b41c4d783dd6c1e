import type { FeatureDependencies } from '../../feature.js'

/** What JWT imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'organization/store.ts': "a token's organization claims follow the caller's membership, asked of organization's store",
}
