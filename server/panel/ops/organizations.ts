import {
  cancelInvitation,
  createOrganization,
  createTeam,
  getOrganizationDetail,
  type InvitationRow,
  inviteMember,
  type OrganizationJSON,
  removeMember,
  removeTeam,
  searchOrganizations,
  systemActor,
  type TeamRow,
  updateMemberRole,
  updateTeam,
} from '../../auth/organizations/index.js'
import type { OrganizationView } from '../contract.js'
import type { HandlerGroup } from '../service.js'
import { PANEL_META } from './users.js'

type OrgOps =
  | 'orgs.list'
  | 'orgs.get'
  | 'orgs.create'
  | 'orgs.updateMemberRole'
  | 'orgs.removeMember'
  | 'orgs.createTeam'
  | 'orgs.renameTeam'
  | 'orgs.removeTeam'
  | 'orgs.invite'
  | 'orgs.cancelInvitation'

const toOrgView = (org: OrganizationJSON, members: number): OrganizationView => ({
  id: org.id,
  name: org.name,
  slug: org.slug,
  logo: org.logo,
  metadata: org.metadata ? JSON.stringify(org.metadata) : null,
  createdAt: org.createdAt.getTime(),
  members,
})

const toTeamView = (t: TeamRow) => ({ ...t, createdAt: t.createdAt.getTime(), updatedAt: t.updatedAt ? t.updatedAt.getTime() : null })

const toInvitationView = (i: InvitationRow) => ({
  ...i,
  expiresAt: i.expiresAt.getTime(),
  createdAt: i.createdAt ? i.createdAt.getTime() : null,
})

/** The panel acts as the system (the server's owner): the domain's permission rules for members do not apply, its invariants do. */
const actor = () => ({ ...systemActor(null), meta: PANEL_META })

export const organizationHandlers: HandlerGroup<OrgOps> = (env) => {
  const ctx = env.gatehouse.ctx
  return {
    'orgs.list'(input) {
      const result = searchOrganizations(ctx, input)
      return { organizations: result.organizations.map((o) => toOrgView(o, o.memberCount)), total: result.total }
    },

    'orgs.get'({ organizationId }) {
      const detail = getOrganizationDetail(ctx, organizationId)
      return {
        organization: toOrgView(detail, detail.members.length),
        members: detail.members.map((m) => ({
          id: m.id,
          userId: m.userId,
          organizationId: m.organizationId,
          role: m.role,
          teamId: m.teamId,
          createdAt: m.createdAt.getTime(),
          user: m.user ? { id: m.user.id, name: m.user.name, email: m.user.email } : null,
        })),
        teams: (detail.teams ?? []).map(toTeamView),
        invitations: detail.invitations.map(toInvitationView),
      }
    },

    async 'orgs.create'({ name, slug, ownerUserId }) {
      const { organization } = await createOrganization(ctx, actor(), { name, slug, userId: ownerUserId, keepCurrentActiveOrganization: true })
      return { organization: toOrgView(organization, organization.members.length) }
    },

    async 'orgs.updateMemberRole'({ organizationId, memberId, role }) {
      await updateMemberRole(ctx, actor(), { organizationId, memberId, role: role.split(',').map((r) => r.trim()).filter(Boolean) })
      return { success: true }
    },

    async 'orgs.removeMember'({ organizationId, memberId }) {
      await removeMember(ctx, actor(), { organizationId, memberIdOrEmail: memberId })
      return { success: true }
    },

    async 'orgs.createTeam'({ organizationId, name }) {
      return { team: toTeamView(await createTeam(ctx, actor(), { organizationId, name })) }
    },

    async 'orgs.renameTeam'({ teamId, name }) {
      return { team: toTeamView(await updateTeam(ctx, actor(), { teamId, data: { name } })) }
    },

    async 'orgs.removeTeam'({ organizationId, teamId }) {
      await removeTeam(ctx, actor(), { organizationId, teamId })
      return { success: true }
    },

    async 'orgs.invite'({ organizationId, email, role, teamId, resend }) {
      const invitation = await inviteMember(ctx, actor(), {
        organizationId,
        email,
        role: role.split(',').map((r) => r.trim()).filter(Boolean),
        ...(teamId ? { teamId } : {}),
        ...(resend ? { resend } : {}),
      })
      return { invitation: toInvitationView(invitation) }
    },

    async 'orgs.cancelInvitation'({ invitationId }) {
      await cancelInvitation(ctx, actor(), invitationId)
      return { success: true }
    },
  }
}

