import type { AuthContext } from '../../core/context.js'
import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'
import { groupNameProblemLine, groupNameProblems } from './claims.js'
import { groupsPanel } from './panel.js'

/** The start-up check of the names rules require, per server. */
const checked = new WeakMap<AuthContext, Promise<void>>()

/**
 * Group names: one rule (names.ts, `groups.*`) for the OIDC `groups` claim, forward auth's
 * `Remote-Groups`, LDAP and SAML. The deprecated `oidcProvider.groups` still works as an alias and
 * is named once in the start-up log.
 */
export const groupsFeature = defineFeature({
  id: 'groups',
  config: configSections,
  panel: groupsPanel,
  ready: (ctx) => checked.get(ctx),
  start: ({ ctx, logger }) => {
    if (ctx.config().oidcProvider.groups)
      logger.warn(
        'config: oidcProvider.groups is deprecated; it still applies, as groups.* (roles ← userRole, memberRoles ← roles). Move it to groups.*',
      )
    // A rule naming an organization or team nobody created yet, or a team by its display name: once
    // each, before the server says it is up (`ready` awaits it; a failed check is a warning, not a stop).
    checked.set(
      ctx,
      groupNameProblems(ctx)
        .then((problems) => {
          for (const problem of problems) logger.warn(groupNameProblemLine(problem))
        })
        .catch((error: Error) => logger.warn(`groups: names in rules not checked: ${error.message}`)),
    )
    return undefined
  },
})
