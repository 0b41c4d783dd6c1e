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
})

// The rules other entry points (the `gatehouse user` CLI, tests, benchmarks) call directly.
export { type Actor, systemActor, userActor } from './actor.js'
export { banUser, unbanUser } from './bans.js'
export { createImpersonationLink } from './impersonation.js'
export { type ListUsersQuery, listUsers } from './list-users.js'
export { inviteToSignUp, type SignUpInvitation } from './sign-up-invitations.js'
export { createUser, setEmailVerified, setRole, setUserPassword } from './users.js'
