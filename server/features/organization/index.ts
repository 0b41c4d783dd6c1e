import { hasPendingInvitation } from './store.js'
import { defineFeature } from '../../feature.js'
import { organizationColumns } from './columns.js'
import { renderInvitationMail } from './mail.js'
import { organizationPanel } from './panel.js'
import { organizationRoutes } from './routes.js'
import { ORG_ERRORS } from './errors.js'
import * as tables from './schema.js'
import { configSections } from './config.js'
import { roleSlugClashes, warnInvalidSlugs } from './slugs.js'

/**
 * Organizations with members, teams and invitations (better-auth's organization plugin; SPEC
 * §3–§9). config.ts (`organization.*`), schema.ts (its tables), errors.ts, access.ts (statements
 * and default roles on core/access-control.ts), store.ts (all its SQL), the rules (orgs, members,
 * invitations, teams), routes.ts, panel-contract.ts / panel.ts and mail.ts (the invitation mail).
 */
export const organizationFeature = defineFeature({
  id: 'organization',
  columns: organizationColumns,
  config: configSections,
  tables,
  errors: ORG_ERRORS,
  routes: organizationRoutes,
  panel: organizationPanel,
  // signUp.mode "invitation": a pending invitation lets its address sign up.
  invitesSignUp: hasPendingInvitation,
  // A role declared with an organization's slug would make its members members of that group.
  configProblems: roleSlugClashes,
  // Slugs stored before the slug rule (slugs.ts): one warning line each, with the way to rename it.
  start: ({ ctx, logger }) => {
    warnInvalidSlugs(ctx, logger).catch((error: Error) => logger.warn(`organization slugs not checked: ${error.message}`))
    return undefined
  },
  mailPreviews: ({ link, now }) => ({
    invitation: () =>
      renderInvitationMail({
        organizationName: 'Analytical Engines',
        inviterName: 'Charles Babbage',
        inviterEmail: 'charles@example.com',
        role: 'member',
        url: link('/accept-invitation/sample'),
        expiresAt: new Date(now + 172800_000),
      }),
  }),
})
