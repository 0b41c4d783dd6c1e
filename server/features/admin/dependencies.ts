import type { FeatureDependencies } from '../../feature.js'

/** What Admin imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'email-password/password-policy.ts': "an admin setting a password applies email-password's policy",
  'email-password/password-reset.ts': "an admin's reset link is email-password's password reset",
  'email-password/verification.ts': "an admin's verification mail is email-password's",
  'organization/orgs.ts': "the panel's user page lists the user's organization memberships",
  'magic-link/service.ts': "the user drawer's set-up link is a magic link",
}
