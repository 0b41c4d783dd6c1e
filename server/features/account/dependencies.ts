import type { FeatureDependencies } from '../../feature.js'

/** What account imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'email-password/password-policy.ts': "a new password follows email-password's password policy",
  'email-password/verification.ts': "an email change sends email-password's verification mail",
  'email-password/routes.ts': "email-password's route helpers",
  'email-password/errors.ts': "email-password's messages for a refused password",
}
