import type { FeatureDependencies } from '../../feature.js'

/** What LDAP imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'email-password/sign-in.ts': "a simple bind is email-password's password check (identifyByPassword)",
  'account/rules.ts': "the password modify operation is account's change of one's own password",
  'admin/access.ts': "who may search the whole directory follows admin's role rule, and a search role must be one admin knows",
  'groups/names.ts': "an entry's groups are the groups feature's one group-name rule",
  'app-passwords/verify.ts': "a bind with an app password is app-passwords' own check",
  'organization/store.ts':
    "an entry's groups name organizations and teams, whose slugs and names the directory reads through organization's store",
  'username/rules.ts': "the uid is username's login-name rule",
}
