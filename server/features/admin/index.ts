import { invitedToSignUp } from './sign-up-invitations.js'
import { defineFeature } from '../../feature.js'
import { adminColumns } from './columns.js'
import { adminPanel } from './panel.js'
import { adminRoutes } from './routes.js'
import { ADMIN_ERR } from './errors.js'
import { configSections } from './config.js'

/**
 * better-auth's admin plugin: users created, listed, changed and removed by administrators, roles
 * and permissions (access.ts on the one access engine), bans, other users' sessions, impersonation
 * and the control panel's one-time impersonation link. Its config section is `admin` (config.ts).
 */
export const adminFeature = defineFeature({
  id: 'admin',
  columns: adminColumns,
  config: configSections,
  errors: ADMIN_ERR,
  routes: adminRoutes,
  panel: adminPanel,
  // signUp.mode "invitation": an administrator's sign-up invitation lets its address sign up.
  invitesSignUp: invitedToSignUp,
  // Its own keys that name a role: removing that role asks first (groups/claims.ts roleChangeImpact).
  namedRoles: (ctx) => {
    const { adminRoles, defaultRole } = ctx.config().admin
    return [
      ...adminRoles.map((name) => ({
        where: 'admin.adminRoles',
        name,
        effect: 'nobody can be given it any more, so only those who hold it now are administrators by it',
      })),
      {
        where: 'admin.defaultRole',
        name: defaultRole,
        effect: 'new users would be given a role that no longer exists, which grants nothing',
      },
    ]
  },
})

// The rules other entry points (the `gatehouse user` CLI, tests, benchmarks) call directly.
export { type Actor, systemActor, userActor } from './actor.js'
export { banUser, unbanUser } from './bans.js'
export { createImpersonationLink } from './impersonation.js'
export { type ListUsersQuery, listUsers } from './list-users.js'
export { inviteToSignUp, type SignUpInvitation } from './sign-up-invitations.js'
export { createUser, setEmailVerified, setRole, setUserPassword } from './users.js'
