import type { FeatureDependencies } from '../../feature.js'

/** What The overview imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'admin/access.ts': "the first-run checklist asks whether an administrator exists, by admin's role rule",
  'forward-auth/counts.ts': "it shows forward auth's allowed counts per app",
  'organization/store.ts': "it counts organizations through organization's store",
}
