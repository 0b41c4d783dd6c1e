import type { FeatureDependencies } from '../../feature.js'

/** What Username imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'email-password/sign-in.ts':
    "username sign-in is email-password's password sign-in sequence (better-auth's username plugin needs emailAndPassword)",
  'email-password/password-policy.ts': "a username sign-up applies email-password's password policy",
}
