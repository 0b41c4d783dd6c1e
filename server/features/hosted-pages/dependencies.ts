import type { FeatureDependencies } from '../../feature.js'

/** What The hosted pages imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'social/options.ts': 'the sign-in page offers a button per enabled social provider',
  'social/providers/index.ts': "the social providers' names and icons",
}
