import { APIError } from '../../core/errors.js'
import type { PanelEnv } from '../../panel/env.js'
import { refuseConflicts } from '../../panel/errors.js'
import { groupNameProblems, groupRuleImpact } from './claims.js'
import type { GroupsConfig } from './config.js'
import { groupsRule } from './names.js'

type Json = Record<string, unknown>

export const groupsPanel = (env: PanelEnv) => {
  const store = env.gatehouse.config
  return {
    'groups.settings': (): Json => ({ ...groupsRule(store.get()) }),
    'groups.nameProblems': () => groupNameProblems(env.gatehouse.ctx),
    'groups.impact': ({ patch }: { patch: Partial<GroupsConfig> }) => groupRuleImpact(env.gatehouse.ctx, patch),
    /** A change from the panel writes `groups.*` and retires the alias, so the two cannot disagree. */
    'groups.configure': async ({ patch, base }: { patch: Json; base?: Json }): Promise<Json> => {
      // `base` names fields as `groups.<key>`, as the view read them: another admin's change since is refused (409).
      await refuseConflicts(env.gatehouse.ctx, { groups: patch }, base)
      const effective = { ...groupsRule(store.get()), ...patch }
      const change = { groups: effective, oidcProvider: { groups: null } }
      const first = store.problems(change)[0]
      if (first) throw new APIError(400, 'INVALID_CONFIG', `${first.path}: ${first.message}`)
      return { ...groupsRule(store.update(change)) }
    },
  }
}
