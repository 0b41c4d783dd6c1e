import type { FeatureDependencies } from '../../feature.js'

/** What backup imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'network/settings.ts': "a backup carries the Network view's settings file, named by the network feature",
}
