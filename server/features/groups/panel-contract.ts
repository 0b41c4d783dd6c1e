import { z } from 'zod'
import { mutation, none, query } from '../../panel-frame/op.js'

/** The control panel's operations on the group-name rule (zod only: shared with the renderer). */
export const groupsContract = {
  'groups.settings': query(
    'The effective `groups.*` rule (the deprecated `oidcProvider.groups` alias applied)',
    none,
    z.record(z.string(), z.unknown()),
  ),
  'groups.nameProblems': query(
    'The group names rules require (forward-auth rules, SAML apps) that no organization or team holds yet, or that name a team by its display name',
    none,
    z.array(z.object({ where: z.string(), name: z.string(), problem: z.string() })),
  ),
  'groups.impact': query(
    'What a change of the `groups.*` switches would take away: the names rules match against group names (SAML apps) that nobody would hold any more',
    z
      .object({
        patch: z
          .object({ roles: z.boolean(), organizations: z.boolean(), memberRoles: z.boolean(), teams: z.boolean() })
          .partial()
          .strict(),
      })
      .strict(),
    z.array(z.object({ where: z.string(), name: z.string(), problem: z.string() })),
  ),
  'groups.organizationImpact': query(
    'What deleting or renaming an organization (or one of its teams) would take away: the names rules require (forward-auth rules, SAML apps) that would name nobody afterwards',
    z
      .object({
        organizationId: z.string().min(1).max(200),
        teamId: z.string().min(1).max(200).optional(),
        remove: z.boolean().optional(),
        slug: z.string().min(1).max(200).optional(),
        teamName: z.string().min(1).max(200).optional(),
      })
      .strict(),
    z.array(z.object({ where: z.string(), name: z.string(), problem: z.string() })),
  ),
  'groups.roleImpact': query(
    'What an edit of the roles (`roles`: admin.roles; `organizationRoles`: organization.roles, each as after the edit) would take away: the rules that name a role it removes or renames (forward-auth rules, SAML apps, LDAP search roles, two-factor enforcement, admin.adminRoles and admin.defaultRole)',
    z
      .object({
        roles: z.record(z.string().max(200), z.unknown()).optional(),
        organizationRoles: z.record(z.string().max(200), z.unknown()).optional(),
      })
      .strict(),
    z.array(z.object({ where: z.string(), name: z.string(), problem: z.string() })),
  ),
  'groups.configure': mutation(
    'Applies a JSON Merge Patch to the `groups.*` configuration, live (validated by the config schema); clears the deprecated `oidcProvider.groups` alias',
    z.object({ patch: z.record(z.string(), z.unknown()), base: z.record(z.string(), z.unknown()).optional() }).strict(),
    z.record(z.string(), z.unknown()),
  ),
}
