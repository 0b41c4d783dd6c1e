import { APIError } from '../../core/errors.js'
import type { PanelEnv } from '../../panel-frame/env.js'
import { refuseConflicts, refuseStartupKeys } from '../../panel-frame/errors.js'
import { startupKeyFor } from '../../config/startup.js'
import {
  groupNameProblems,
  groupRuleImpact,
  type OrganizationChange,
  organizationChangeImpact,
  type RoleChange,
  roleChangeImpact,
} from './claims.js'
import type { GroupsConfig } from './config.js'
import { groupsRule } from './names.js'

type Json = Record<string, unknown>

export const groupsPanel = (env: PanelEnv) => {
  const store = env.gatehouse.config
  return {
    'groups.settings': (): Json => ({ ...groupsRule(store.get()) }),
    'groups.nameProblems': () => groupNameProblems(env.gatehouse.ctx),
    'groups.impact': ({ patch }: { patch: Partial<GroupsConfig> }) => groupRuleImpact(env.gatehouse.ctx, patch),
    'groups.organizationImpact': (change: OrganizationChange) => organizationChangeImpact(env.gatehouse.ctx, change),
    'groups.roleImpact': (change: RoleChange) => roleChangeImpact(env.gatehouse.ctx, change),
    /** A change from the panel writes `groups.*` and retires the alias, so the two cannot disagree. */
    'groups.configure': async ({ patch, base }: { patch: Json; base?: Json }): Promise<Json> => {
      // `base` names fields as `groups.<key>`, as the view read them: another admin's change since is refused (409).
      await refuseConflicts(env.gatehouse.ctx, { groups: patch }, base)
      // A switch set at start-up would not take effect: refused (409 SET_AT_STARTUP), never stored.
      const startup = store.startupKeys()
      refuseStartupKeys(startup, { groups: patch })
      // The rule as it is (the alias folded in), except what start-up options set: those stay theirs.
      const effective = Object.fromEntries(
        Object.entries({ ...groupsRule(store.get()), ...patch }).filter(([key]) => !startupKeyFor(startup, `groups.${key}`)),
      )
      const aliasAtStartup = startupKeyFor(startup, 'oidcProvider.groups')
      const change = { groups: effective, ...(aliasAtStartup ? {} : { oidcProvider: { groups: null } }) }
      const first = store.problems(change)[0]
      if (first) throw new APIError(400, 'INVALID_CONFIG', `${first.path}: ${first.message}`)
      return { ...groupsRule(store.update(change)) }
    },
  }
}
