import type { FeatureDependencies } from '../../feature.js'

/** What Import imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'admin/access.ts': "an imported user's roles follow admin's role rule",
  'username/rules.ts': "an imported username follows username's rules",
}
