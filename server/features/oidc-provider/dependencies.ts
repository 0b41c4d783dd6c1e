import type { FeatureDependencies } from '../../feature.js'

/** What The OpenID provider imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'jwt/keys.ts': "it signs ID tokens with the jwt feature's keys and publishes their JWKS",
  'organization/store.ts': "a client restricted to organizations or teams reads memberships through organization's store",
  'groups/person.ts': "its claims come from the faces' one record of a person",
}
