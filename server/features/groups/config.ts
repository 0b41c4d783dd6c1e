import { z } from 'zod'

/**
 * `groups.*`: the one rule for group names, read by every face that names a person's groups (the
 * OIDC `groups` claim, forward auth's `Remote-Groups`, LDAP's groups and `memberOf`, SAML's
 * `groups` attribute). Organization slugs are lower-case letters, digits and hyphens and never a
 * role's name (the organization feature's slug rule), so no name here can be forged by creating an
 * organization: `admin` is only ever the role, `acme:admin` only a member role, `acme/Dev` a team.
 */
export const groupsConfig = z
  .object({
    /** Each of the person's Gatehouse roles (`admin`, `user`, declared roles). */
    roles: z.boolean().default(true),
    /** Each organization's slug (`acme`). */
    organizations: z.boolean().default(true),
    /** `<org slug>:<member role>` for the role(s) held in each organization (`acme:owner`). */
    memberRoles: z.boolean().default(true),
    /** `<org slug>/<team name>` for each team (`acme/Developers`). */
    teams: z.boolean().default(true),
  })
  .prefault({})

export type GroupsConfig = z.output<typeof groupsConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { groups: groupsConfig }
