import { z } from 'zod'

const seconds = z.number().int().min(0)

/** `organization.*`: better-auth's organization plugin options (same names and defaults), teams included. */
export const organizationConfig = z
  .object({
    allowUserToCreateOrganization: z.boolean().default(true),
    /** Organizations one user may belong to when creating another; unset: unlimited. */
    organizationLimit: z.number().int().min(0).optional(),
    creatorRole: z.string().min(1).default('owner'),
    membershipLimit: z.number().int().min(1).default(100),
    /** Pending invitations per organization. */
    invitationLimit: z.number().int().min(0).default(100),
    invitationExpiresIn: seconds.default(172800),
    cancelPendingInvitationsOnReInvite: z.boolean().default(false),
    /** Accept link in invitation mail; `{id}` is replaced by the invitation id. Default: the hosted page {baseURL}/ui/accept-invitation?id={id}. */
    invitationURL: z.url().nullish(),
    teams: z
      .object({
        enabled: z.boolean().default(true),
        /** Teams per organization; unset: unlimited. */
        maximumTeams: z.number().int().min(1).optional(),
        allowRemovingAllTeams: z.boolean().default(false),
      })
      .prefault({}),
    /** Custom roles: name → resource → allowed actions. Added to (or overriding) owner, admin and member. */
    roles: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), z.record(z.string(), z.array(z.string()))).default({}),
  })
  .prefault({})

export type OrganizationConfig = z.output<typeof organizationConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { organization: organizationConfig }
