import { z } from 'zod'
import type { AuthContext } from '../../core/context.js'
import type { SessionRow, SessionWithUser } from '../../core/sessions.js'
import { defineRoute, type RouteContext } from '../../http/route.js'
import { hasDontRemember, publicSession, setSessionCacheCookie, setSessionCookies } from '../../http/session.js'
import { ORG_MESSAGES } from './errors.js'
import { acceptInvitation, cancelInvitation, getInvitation, inviteMember, listInvitations, rejectInvitation } from './invitations.js'
import {
  checkOrgPermission,
  getActiveMember,
  getActiveMemberRole,
  leaveOrganization,
  listMembers,
  removeMember,
  updateMemberRole,
} from './members.js'
import {
  checkSlug,
  createOrganization,
  deleteOrganization,
  getFullOrganization,
  listUserOrganizations,
  setActiveOrganization,
  updateOrganization,
} from './orgs.js'
import { userActor } from './shared.js'
import { MEMBER_FILTER_FIELDS, MEMBER_FILTER_OPERATORS, MEMBER_SORT_FIELDS } from './store.js'
import {
  addTeamMember,
  createTeam,
  listTeamMembers,
  listTeams,
  listUserTeams,
  removeTeam,
  removeTeamMember,
  setActiveTeam,
  updateTeam,
} from './teams.js'

/**
 * better-auth's organization endpoints (reference §4.4, with the 1.7 additions the current client
 * calls). add-member is deliberately absent: it is server-only (a domain function the control
 * panel calls), so over HTTP it answers 404 like better-auth.
 */

type AuthedContext = RouteContext<unknown, unknown, SessionWithUser>

const actorOf = (rc: AuthedContext) => userActor(rc.session, rc.meta)

/**
 * The caller's session changed its active organization: re-issue the cookie cache so get-session
 * shows it at once, and (for set-active, as better-auth does) the session cookie too.
 */
function reflectSession(rc: AuthedContext, changed: SessionRow | null, options: { reissueToken?: boolean } = {}): void {
  if (!changed) return
  const data: SessionWithUser = { session: changed, user: rc.session.user }
  rc.session = data
  if (options.reissueToken) {
    // better-auth 1.7's set-active / set-active-team call setSessionCookie without a maxAge: the
    // cookie gets the full session.expiresIn, not the session's remaining lifetime.
    setSessionCookies(rc, data, { dontRemember: hasDontRemember(rc) })
  } else if (rc.ctx.config().session.cookieCache.enabled) {
    setSessionCacheCookie(rc, publicSession(data))
  }
}

const roleInput = z.union([z.string(), z.array(z.string())])
const optionalId = z.string().min(1).optional()
const metadata = z.record(z.string(), z.unknown())
const permissionsInput = z.record(z.string(), z.array(z.string()))
const count = z.coerce.number().int().min(0)

/** Team endpoints exist only with `organization.teams.enabled` (otherwise 404, as without better-auth's teams option). */
const teamsEnabled = (ctx: AuthContext): boolean => ctx.config().organization.teams.enabled

export const organizationRoutes = [
  defineRoute({
    method: 'POST',
    path: '/organization/create',
    auth: 'session',
    body: z.object({
      name: z.string().min(1),
      slug: z.string().min(1),
      userId: z.string().optional(),
      logo: z.string().nullish(),
      metadata: metadata.optional(),
      keepCurrentActiveOrganization: z.boolean().optional(),
    }),
    handler: async (rc) => {
      const { organization, session } = await createOrganization(rc.ctx, actorOf(rc), rc.body)
      reflectSession(rc, session)
      // better-auth 1.7 answers create without `metadata` when none was given.
      const { metadata, ...rest } = organization
      return rc.body.metadata ? organization : rest
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/check-slug',
    auth: 'session',
    body: z.object({ slug: z.string().min(1) }),
    handler: (rc) => checkSlug(rc.ctx, actorOf(rc), rc.body.slug),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/update',
    auth: 'session',
    body: z.object({
      data: z.object({
        name: z.string().min(1).optional(),
        slug: z.string().min(1).optional(),
        logo: z.string().nullish(),
        metadata: metadata.nullish(),
      }),
      organizationId: optionalId,
    }),
    handler: async (rc) => await updateOrganization(rc.ctx, actorOf(rc), rc.body),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/delete',
    auth: 'session',
    body: z.object({ organizationId: z.string().min(1) }),
    handler: async (rc) => {
      const { organization, session } = await deleteOrganization(rc.ctx, actorOf(rc), rc.body.organizationId)
      reflectSession(rc, session)
      return organization
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/organization/list',
    auth: 'session',
    handler: (rc) => listUserOrganizations(rc.ctx, rc.session.user.id),
  }),

  defineRoute({
    method: 'GET',
    path: '/organization/get-full-organization',
    auth: 'session',
    query: z.object({ organizationId: optionalId, organizationSlug: optionalId, membersLimit: count.optional() }),
    handler: async (rc) => await getFullOrganization(rc.ctx, actorOf(rc), rc.query),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/set-active',
    auth: 'session',
    body: z.object({ organizationId: z.string().min(1).nullish(), organizationSlug: optionalId }),
    handler: async (rc) => {
      const { organization, session } = await setActiveOrganization(rc.ctx, actorOf(rc), rc.body)
      reflectSession(rc, session, { reissueToken: true })
      return organization
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/invite-member',
    auth: 'session',
    body: z.object({
      email: z.string(),
      role: roleInput,
      organizationId: optionalId,
      resend: z.boolean().optional(),
      teamId: optionalId,
    }),
    handler: async (rc) => await inviteMember(rc.ctx, actorOf(rc), rc.body),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/accept-invitation',
    auth: 'session',
    body: z.object({ invitationId: z.string().min(1) }),
    handler: async (rc) => {
      const { invitation, member, session } = await acceptInvitation(rc.ctx, actorOf(rc), rc.body.invitationId)
      reflectSession(rc, session)
      return { invitation, member }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/reject-invitation',
    auth: 'session',
    body: z.object({ invitationId: z.string().min(1) }),
    handler: async (rc) => await rejectInvitation(rc.ctx, actorOf(rc), rc.body.invitationId),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/cancel-invitation',
    auth: 'session',
    body: z.object({ invitationId: z.string().min(1) }),
    handler: async (rc) => await cancelInvitation(rc.ctx, actorOf(rc), rc.body.invitationId),
  }),

  defineRoute({
    method: 'GET',
    path: '/organization/get-invitation',
    auth: 'session',
    query: z.object({ id: z.string().min(1) }),
    handler: async (rc) => await getInvitation(rc.ctx, actorOf(rc), rc.query.id),
  }),

  defineRoute({
    method: 'GET',
    path: '/organization/list-invitations',
    auth: 'session',
    query: z.object({ organizationId: optionalId }),
    handler: async (rc) => await listInvitations(rc.ctx, actorOf(rc), rc.query.organizationId),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/remove-member',
    auth: 'session',
    body: z.object({ memberIdOrEmail: z.string().min(1), organizationId: optionalId }),
    handler: async (rc) => {
      const { member, session } = await removeMember(rc.ctx, actorOf(rc), rc.body)
      reflectSession(rc, session)
      return { member }
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/update-member-role',
    auth: 'session',
    body: z.object({ memberId: z.string().min(1), role: roleInput, organizationId: optionalId }),
    handler: async (rc) => await updateMemberRole(rc.ctx, actorOf(rc), rc.body),
  }),

  defineRoute({
    method: 'GET',
    path: '/organization/get-active-member',
    auth: 'session',
    handler: async (rc) => await getActiveMember(rc.ctx, actorOf(rc)),
  }),

  defineRoute({
    method: 'GET',
    path: '/organization/get-active-member-role',
    auth: 'session',
    query: z.object({ userId: optionalId, organizationId: optionalId, organizationSlug: optionalId }),
    handler: async (rc) => await getActiveMemberRole(rc.ctx, actorOf(rc), rc.query),
  }),

  defineRoute({
    method: 'GET',
    path: '/organization/list-members',
    auth: 'session',
    query: z.object({
      organizationId: optionalId,
      organizationSlug: optionalId,
      limit: count.optional(),
      offset: count.optional(),
      sortBy: z.enum(MEMBER_SORT_FIELDS).optional(),
      sortDirection: z.enum(['asc', 'desc']).optional(),
      filterField: z.enum(MEMBER_FILTER_FIELDS).optional(),
      filterOperator: z.enum(MEMBER_FILTER_OPERATORS).optional(),
      filterValue: z.string().optional(),
    }),
    handler: async (rc) => await listMembers(rc.ctx, actorOf(rc), rc.query),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/leave',
    auth: 'session',
    body: z.object({ organizationId: z.string().min(1) }),
    handler: async (rc) => {
      const { member, session } = await leaveOrganization(rc.ctx, actorOf(rc), rc.body.organizationId)
      reflectSession(rc, session)
      return member
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/has-permission',
    auth: 'session',
    body: z
      .object({ permissions: permissionsInput.optional(), permission: permissionsInput.optional(), organizationId: optionalId })
      .refine((b) => b.permissions !== undefined || b.permission !== undefined, {
        message: ORG_MESSAGES.NO_PERMISSIONS_PASSED,
        path: ['permissions'],
      }),
    handler: async (rc) =>
      await checkOrgPermission(rc.ctx, actorOf(rc), {
        organizationId: rc.body.organizationId,
        permissions: rc.body.permissions ?? rc.body.permission ?? {},
      }),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/create-team',
    auth: 'session',
    enabled: teamsEnabled,
    body: z.object({ name: z.string().min(1), organizationId: optionalId }),
    handler: async (rc) => await createTeam(rc.ctx, actorOf(rc), rc.body),
  }),

  defineRoute({
    method: 'GET',
    path: '/organization/list-teams',
    auth: 'session',
    enabled: teamsEnabled,
    query: z.object({ organizationId: optionalId }),
    handler: async (rc) => await listTeams(rc.ctx, actorOf(rc), rc.query.organizationId),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/update-team',
    auth: 'session',
    enabled: teamsEnabled,
    body: z.object({
      teamId: z.string().min(1),
      data: z.looseObject({ name: z.string().min(1).optional(), organizationId: optionalId }),
    }),
    handler: async (rc) => await updateTeam(rc.ctx, actorOf(rc), { teamId: rc.body.teamId, data: { name: rc.body.data.name } }),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/remove-team',
    auth: 'session',
    enabled: teamsEnabled,
    body: z.object({ teamId: z.string().min(1), organizationId: optionalId }),
    handler: async (rc) => await removeTeam(rc.ctx, actorOf(rc), rc.body),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/set-active-team',
    auth: 'session',
    enabled: teamsEnabled,
    body: z.object({ teamId: z.string().nullish() }),
    handler: async (rc) => {
      const { team, session } = await setActiveTeam(rc.ctx, actorOf(rc), rc.body.teamId)
      reflectSession(rc, session, { reissueToken: true })
      return team
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/organization/list-user-teams',
    auth: 'session',
    enabled: teamsEnabled,
    query: z.object({ userId: optionalId, organizationId: optionalId }),
    handler: async (rc) => await listUserTeams(rc.ctx, actorOf(rc), rc.query),
  }),

  defineRoute({
    method: 'GET',
    path: '/organization/list-team-members',
    auth: 'session',
    enabled: teamsEnabled,
    query: z.object({ teamId: optionalId }),
    handler: async (rc) => await listTeamMembers(rc.ctx, actorOf(rc), rc.query.teamId),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/add-team-member',
    auth: 'session',
    enabled: teamsEnabled,
    body: z.object({ teamId: z.string().min(1), userId: z.coerce.string().min(1), organizationId: optionalId }),
    handler: async (rc) => await addTeamMember(rc.ctx, actorOf(rc), rc.body),
  }),

  defineRoute({
    method: 'POST',
    path: '/organization/remove-team-member',
    auth: 'session',
    enabled: teamsEnabled,
    body: z.object({ teamId: z.string().min(1), userId: z.coerce.string().min(1), organizationId: optionalId }),
    handler: async (rc) => await removeTeamMember(rc.ctx, actorOf(rc), rc.body),
  }),
]
