import { APIError } from '../core/errors.js'
import type { PanelEnv } from './env.js'
import { refuseConflicts, refuseStartupKeys } from './errors.js'

type Json = Record<string, unknown>

/**
 * A feature's own settings operations: read its config section and apply a merge patch to it,
 * live, through the same store and schema as the settings view. (The generic settings view
 * treats any key named `apiKey` as a secret and will not edit it, so the api-key section is
 * edited here; the jwt feature uses the same pair for symmetry.)
 */
export function sectionSettings(env: PanelEnv, section: 'apiKey' | 'jwt' | 'oidcProvider') {
  const store = env.gatehouse.config
  return {
    read: (): Json => store.get()[section] as unknown as Json,
    /** `base`: each changed field as the view read it, by its whole dotted path (`oidcProvider.x`): refused (409) when another admin changed it since. */
    apply: async ({ patch, base }: { patch: Json; base?: Json }): Promise<Json> => {
      await refuseConflicts(env.gatehouse.ctx, { [section]: patch }, base)
      // A key a start-up option sets would not take effect: refused (409 SET_AT_STARTUP), never stored.
      refuseStartupKeys(store.startupKeys(), { [section]: patch })
      const issues = store.problems({ [section]: patch })
      const first = issues[0]
      if (first) throw new APIError(400, 'INVALID_CONFIG', `${first.path}: ${first.message}`)
      return store.update({ [section]: patch })[section] as unknown as Json
    },
  }
}
