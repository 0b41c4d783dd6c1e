import { PANEL_META } from '../../panel-frame/op.js'
import type { PanelEnv } from '../../panel-frame/env.js'
import type { LdapTestInput } from './probe.js'

/**
 * The LDAP view's handler: the listener's module (loaded at first use, as the listener loads it:
 * a panel that never tests loads nothing of LDAP) runs the bind and the search (probe.ts).
 */
export const ldapPanel = (load: () => Promise<typeof import('./server.js')>) => (env: PanelEnv) => {
  const ctx = env.gatehouse.ctx
  return {
    'ldap.test': async (input: LdapTestInput) => (await load()).testBindAndSearch(ctx, input, PANEL_META),
  }
}
