import type { FeatureDependencies } from '../../feature.js'

/** What Groups imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'organization/store.ts': "group names are made of memberships and teams, read through organization's store",
  'organization/access.ts': "the member roles an edit removes are those organization's role table knows before the edit and not after",
  'organization/slugs.ts': "the names rules require are checked against organizations by organization's slug rule",
  'admin/access.ts': "the roles an edit removes are those admin's role rule knows before the edit and not after",
  'username/rules.ts': "the faces' record of a person carries the login name by username's rule",
}
