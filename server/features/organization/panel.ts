import type { GatehouseConfig } from '../../config/schema.js'
import { parseRoleList } from '../../core/access-control.js'
import type { HandlerGroup } from '../../panel-frame/env.js'
import type { organizationContract } from './panel-contract.js'
import type { OrganizationJSON } from './shared.js'
import { cancelInvitation, inviteMember } from './invitations.js'
import { addMember, removeMember, updateMemberRole } from './members.js'
import { createOrganization, deleteOrganization, getOrganizationDetail, searchOrganizations, updateOrganization } from './orgs.js'
import type { InvitationView, OrganizationView, TeamView } from './panel-contract.js'
import type { InvitationRow, TeamRow } from './schema.js'
import type { MailSender, OrgActor } from './shared.js'
import { invalidSlugNotice } from './slugs.js'
import { panelCaller } from '../../core/panel-caller.js'
import type { AuthContext } from '../../core/context.js'
import { orgRoles } from './access.js'
import { createTeam, listOrganizationTeamMembers, removeTeam, setTeamMembers, updateTeam } from './teams.js'

type OrgOps =
  | 'orgs.list'
  | 'orgs.get'
  | 'orgs.create'
  | 'orgs.update'
  | 'orgs.remove'
  | 'orgs.addMember'
  | 'orgs.setTeamMembers'
  | 'orgs.updateMemberRole'
  | 'orgs.removeMember'
  | 'orgs.createTeam'
  | 'orgs.renameTeam'
  | 'orgs.removeTeam'
  | 'orgs.invite'
  | 'orgs.cancelInvitation'

const PANEL_META = { ipAddress: null, userAgent: 'gatehouse-panel' }

const toOrgView = (config: GatehouseConfig, org: OrganizationJSON, members: number): OrganizationView => ({
  id: org.id,
  name: org.name,
  slug: org.slug,
  logo: org.logo,
  metadata: org.metadata ? JSON.stringify(org.metadata) : null,
  createdAt: org.createdAt.getTime(),
  members,
  slugProblem: invalidSlugNotice(config, org),
})

const toTeamView = (t: TeamRow): TeamView => ({
  ...t,
  createdAt: t.createdAt.getTime(),
  updatedAt: t.updatedAt ? t.updatedAt.getTime() : null,
})

const toInvitationView = (i: InvitationRow): InvitationView => ({
  ...i,
  expiresAt: i.expiresAt.getTime(),
  createdAt: i.createdAt ? i.createdAt.getTime() : null,
})

/**
 * The panel acts as the system (the server's owner): the domain's permission rules for members do
 * not apply, its invariants do. What it mails names who runs the operation: the administrator
 * signed in to the panel, or the operator (desktop, recovery link) in the app's name.
 */
const actor = (ctx: AuthContext): OrgActor => {
  const caller = panelCaller()
  const sender: MailSender =
    caller?.kind === 'admin'
      ? { userId: caller.user.id, name: caller.user.name, email: caller.user.email }
      : { userId: null, name: `The ${ctx.config().mail.appName} administrator`, email: null }
  return { kind: 'system', actorUserId: null, meta: PANEL_META, sender }
}

export const organizationPanel: HandlerGroup<typeof organizationContract, OrgOps> = (env) => {
  const ctx = env.gatehouse.ctx
  return {
    async 'orgs.list'(input) {
      const result = await searchOrganizations(ctx, input)
      return { organizations: result.organizations.map((o) => toOrgView(ctx.config(), o, o.memberCount)), total: result.total }
    },

    async 'orgs.get'({ organizationId }) {
      const detail = await getOrganizationDetail(ctx, organizationId)
      return {
        organization: toOrgView(ctx.config(), detail, detail.members.length),
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
        teamMembers: await listOrganizationTeamMembers(ctx, organizationId),
        roles: Object.keys(orgRoles(ctx.config())),
      }
    },

    async 'orgs.create'({ name, slug, ownerUserId }) {
      const { organization } = await createOrganization(ctx, actor(ctx), {
        name,
        slug,
        userId: ownerUserId,
        keepCurrentActiveOrganization: true,
      })
      return { organization: toOrgView(ctx.config(), organization, organization.members.length) }
    },

    async 'orgs.update'({ organizationId, name, slug, base }) {
      const data = { ...(name !== undefined ? { name } : {}), ...(slug ? { slug } : {}) }
      const updated = await updateOrganization(ctx, actor(ctx), { organizationId, data, ...(base ? { base } : {}) })
      const detail = await getOrganizationDetail(ctx, updated.id)
      return { organization: toOrgView(ctx.config(), updated, detail.members.length) }
    },

    async 'orgs.remove'({ organizationId }) {
      await deleteOrganization(ctx, actor(ctx), organizationId)
      return { success: true }
    },

    async 'orgs.addMember'({ organizationId, userId, role, teamId }) {
      const row = await addMember(ctx, actor(ctx), { organizationId, userId, role: parseRoleList(role), ...(teamId ? { teamId } : {}) })
      return { member: { id: row.id, userId: row.userId, role: row.role } }
    },

    async 'orgs.setTeamMembers'({ organizationId, teamId, userIds }) {
      return setTeamMembers(ctx, actor(ctx), { organizationId, teamId, userIds })
    },

    async 'orgs.updateMemberRole'({ organizationId, memberId, role }) {
      await updateMemberRole(ctx, actor(ctx), { organizationId, memberId, role: parseRoleList(role) })
      return { success: true }
    },

    async 'orgs.removeMember'({ organizationId, memberId }) {
      await removeMember(ctx, actor(ctx), { organizationId, memberIdOrEmail: memberId })
      return { success: true }
    },

    async 'orgs.createTeam'({ organizationId, name }) {
      return { team: toTeamView(await createTeam(ctx, actor(ctx), { organizationId, name })) }
    },

    async 'orgs.renameTeam'({ teamId, name }) {
      return { team: toTeamView(await updateTeam(ctx, actor(ctx), { teamId, data: { name } })) }
    },

    async 'orgs.removeTeam'({ organizationId, teamId }) {
      await removeTeam(ctx, actor(ctx), { organizationId, teamId })
      return { success: true }
    },

    async 'orgs.invite'({ organizationId, email, role, teamId, resend }) {
      const invitation = await inviteMember(ctx, actor(ctx), {
        organizationId,
        email,
        role: parseRoleList(role),
        ...(teamId ? { teamId } : {}),
        ...(resend ? { resend } : {}),
      })
      return { invitation: toInvitationView(invitation) }
    },

    async 'orgs.cancelInvitation'({ invitationId }) {
      await cancelInvitation(ctx, actor(ctx), invitationId)
      return { success: true }
    },
  }
}
