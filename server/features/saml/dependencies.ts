import type { FeatureDependencies } from '../../feature.js'

/** What The SAML identity provider imports from other features, each with why: bin/gen-features.js makes check:deps' rule of it (docs/ARCHITECTURE.md). */
export const dependsOn: FeatureDependencies = {
  'groups/person.ts': "its attributes come from the faces' one record of a person",
  'groups/names.ts': "a service provider's allowed groups are read by the one group-name rule",
}
