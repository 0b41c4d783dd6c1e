import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'
import { groupsPanel } from './panel.js'

/**
 * Group names: one rule (names.ts, `groups.*`) for the OIDC `groups` claim, forward auth's
 * `Remote-Groups`, LDAP and SAML. The deprecated `oidcProvider.groups` still works as an alias and
 * is named once in the start-up log.
 */
export const groupsFeature = defineFeature({
  id: 'groups',
  config: configSections,
  panel: groupsPanel,
  start: ({ ctx, logger }) => {
    if (ctx.config().oidcProvider.groups)
      logger.warn(
        'config: oidcProvider.groups is deprecated; it still applies, as groups.* (roles ← userRole, memberRoles ← roles). Move it to groups.*',
      )
    return undefined
  },
})
