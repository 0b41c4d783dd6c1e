import type { FeatureDependencies } from '../../feature.js'

/** What Two-factor imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'passkey/store.ts': 'a passkey counts as a second factor, so two-factor reads the passkeys',
}
