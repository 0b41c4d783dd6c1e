import { z } from 'zod'
import { mutation, ok, query, readBase } from '../../panel-frame/op.js'

/**
 * The control panel's organization operations (zod only: shared with the renderer). Times are
 * epoch ms. Failures name the form field they concern (`slug`, `email`, `role`, `teamId`,
 * `teamName`) in PanelFailure.field; the page shows them beside it.
 */

const ms = z.number()
const id = z.string().min(1).max(200)

export const organizationRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  logo: z.string().nullable(),
  metadata: z.string().nullable(),
  createdAt: ms,
  members: z.number(),
  /** Why the stored slug breaks the slug rule (organization/slugs.ts), with the way to rename it; null when it does not. */
  slugProblem: z.string().nullable(),
})
export type OrganizationView = z.infer<typeof organizationRowSchema>

export const memberRowSchema = z.object({
  id: z.string(),
  userId: z.string(),
  organizationId: z.string(),
  role: z.string(),
  teamId: z.string().nullable(),
  createdAt: ms,
  user: z.object({ id: z.string(), name: z.string(), email: z.string() }).nullable(),
})

export const teamRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  organizationId: z.string(),
  createdAt: ms,
  updatedAt: ms.nullable(),
})

export const invitationRowSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  email: z.string(),
  role: z.string().nullable(),
  status: z.string(),
  teamId: z.string().nullable(),
  inviterId: z.string(),
  expiresAt: ms,
  createdAt: ms.nullable(),
})

export type MemberView = z.infer<typeof memberRowSchema>
export type TeamView = z.infer<typeof teamRowSchema>
export type InvitationView = z.infer<typeof invitationRowSchema>

export const organizationContract = {
  'orgs.list': query(
    'Organizations, searchable by name or slug',
    z
      .object({
        search: z.string().max(200).optional(),
        limit: z.number().int().min(1).max(500).default(25),
        offset: z.number().int().min(0).default(0),
      })
      .strict(),
    z.object({ organizations: z.array(organizationRowSchema), total: z.number() }),
  ),
  'orgs.get': query(
    'An organization with members, teams and invitations',
    z.object({ organizationId: id }).strict(),
    z.object({
      organization: organizationRowSchema,
      members: z.array(memberRowSchema),
      teams: z.array(teamRowSchema),
      invitations: z.array(invitationRowSchema),
      /** Who is in which team (empty without teams). */
      teamMembers: z.array(z.object({ teamId: z.string(), userId: z.string() })),
      /** The organization roles defined (owner, admin, member and the configured ones). */
      roles: z.array(z.string()),
    }),
  ),
  'orgs.create': mutation(
    'Creates an organization owned by a user',
    z.object({ name: z.string().min(1).max(200), slug: z.string().min(1).max(200), ownerUserId: id }).strict(),
    z.object({ organization: organizationRowSchema }),
  ),
  'orgs.update': mutation(
    'Renames an organization (name and slug): only the fields given; with `base` (each of them as read), refused (409 CONFLICT) when another admin changed one since',
    z
      .object({
        organizationId: id,
        name: z.string().trim().min(1).max(200).optional(),
        slug: z.string().min(1).max(200).optional(),
        base: readBase,
      })
      .strict(),
    z.object({ organization: organizationRowSchema }),
  ),
  'orgs.remove': mutation('Deletes an organization with its members, teams and invitations', z.object({ organizationId: id }).strict(), ok),
  'orgs.addMember': mutation(
    'Adds an existing user as a member with a role (and optionally to a team)',
    z.object({ organizationId: id, userId: id, role: z.string().min(1).max(200), teamId: id.optional() }).strict(),
    z.object({ member: z.object({ id: z.string(), userId: z.string(), role: z.string() }) }),
  ),
  'orgs.setTeamMembers': mutation(
    "Sets a team's members (each a member of the organization)",
    z.object({ organizationId: id, teamId: id, userIds: z.array(id).max(1000) }).strict(),
    z.object({ added: z.array(z.string()), removed: z.array(z.string()) }),
  ),
  'orgs.updateMemberRole': mutation(
    "Changes a member's role",
    z.object({ organizationId: id, memberId: id, role: z.string().min(1).max(200) }).strict(),
    ok,
  ),
  'orgs.removeMember': mutation(
    'Removes a member (the last owner cannot be removed)',
    z.object({ organizationId: id, memberId: id }).strict(),
    ok,
  ),
  'orgs.createTeam': mutation(
    'Creates a team',
    z.object({ organizationId: id, name: z.string().min(1).max(200) }).strict(),
    z.object({ team: teamRowSchema }),
  ),
  'orgs.renameTeam': mutation(
    'Renames a team',
    z.object({ organizationId: id, teamId: id, name: z.string().min(1).max(200) }).strict(),
    z.object({ team: teamRowSchema }),
  ),
  'orgs.removeTeam': mutation('Removes a team', z.object({ organizationId: id, teamId: id }).strict(), ok),
  'orgs.invite': mutation(
    'Invites an email address',
    z
      .object({
        organizationId: id,
        email: z.string().min(3).max(320),
        role: z.string().min(1).max(200),
        teamId: id.optional(),
        resend: z.boolean().optional(),
      })
      .strict(),
    z.object({ invitation: invitationRowSchema }),
  ),
  'orgs.cancelInvitation': mutation('Cancels a pending invitation', z.object({ organizationId: id, invitationId: id }).strict(), ok),
}
