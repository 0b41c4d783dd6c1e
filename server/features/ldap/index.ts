import type { GatehouseConfig } from '../../config/schema.js'
import type { AuthContext } from '../../core/context.js'
import { ListenerSwitch } from '../../core/listener-switch.js'
import { revokeBindings } from './revocations.js'
import { type BoundListeners, defineFeature, hostPort, ListenerRefusal, type ListenerState } from '../../feature.js'
import { configSections } from './config.js'
import { LDAP_ERRORS } from './errors.js'
import { ldapPanel } from './panel.js'
import type { LdapListeners, LdapRole } from './server.js'
import { ldapMetrics } from './metrics.js'

/** Each server's LDAP listeners once bound (tests, the start-up line and `ready` read it); the set serving now. */
const started = new WeakMap<AuthContext, Promise<LdapListeners>>()

/** The LDAP listeners' addresses, once bound; undefined when LDAP is off. */
export async function ldapListening(ctx: AuthContext): Promise<LdapListeners['bound'] | undefined> {
  return (await started.get(ctx))?.bound
}

/** The listener's module (with the panel's bind-and-search test), loaded when LDAP is switched on or tested. */
const loadServer = () => import('./server.js')

/** What the start hook's listeners answer to the feature's hooks: a save's bind first, and their state. */
interface LdapControl {
  bind(next: GatehouseConfig): Promise<BoundListeners | undefined>
  states(): ListenerState[]
}
const controls = new WeakMap<AuthContext, LdapControl>()

/** The listener settings: a change of any of them opens the listeners again (those on an unchanged address are kept). */
const settingsOf = (ldap: GatehouseConfig['ldap']): string | null => {
  const { enabled, address, ldapsAddress, tls } = ldap
  return enabled ? JSON.stringify({ address, ldapsAddress, tls }) : null
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Why each listener could not be bound the last time it was tried, and when (epoch ms). */
type LastErrors = Partial<Record<LdapRole, { message: string; at: number }>>

/** The LDAP and LDAPS listeners' state for the panel (`listeners.state`). */
function listenerStates(conf: GatehouseConfig['ldap'], running: LdapListeners | null, lastError: LastErrors): ListenerState[] {
  const wantsLdaps = conf.enabled && Boolean(conf.ldapsAddress && conf.tls)
  const state = (role: LdapRole, wants: boolean, configured: string | null | undefined): ListenerState => {
    const at = role === 'ldap' ? running?.bound.address : running?.bound.ldaps
    const error = lastError[role] ?? null
    return {
      name: role,
      field: role === 'ldap' ? 'ldap.address' : 'ldap.ldapsAddress',
      state: at ? 'listening' : wants && error ? 'failed' : 'stopped',
      address: at ? hostPort(at) : wants ? (configured ?? null) : null,
      connections: at && running ? running.connections(role) : 0,
      lastError: error,
    }
  }
  return [state('ldap', conf.enabled, conf.address), state('ldaps', wantsLdaps, conf.ldapsAddress)]
}

/**
 * The LDAP interface (issue 36, docs/LDAP.md): a read-only directory of the same users and groups
 * for everything that speaks LDAP (NAS, hypervisor, media servers, Nextcloud, Apache). With
 * `ldap.enabled` the start hook loads the codec and opens the listeners; off, none of its modules
 * (nor the @ldapjs packages) is loaded, so a disabled LDAP costs nothing at start-up. The switch and
 * the addresses apply live: a new address is bound before the old listener closes. The panel's save
 * binds it first (`bindListeners`: refused with the reason when it cannot be bound, nothing stored);
 * a change applied otherwise (another instance's, a reload) that cannot be bound leaves the old
 * listeners serving and says so in the log and in the listener's state.
 */
export const ldapFeature = defineFeature({
  id: 'ldap',
  config: configSections,
  errors: LDAP_ERRORS,
  metrics: ldapMetrics,
  panel: ldapPanel(loadServer),
  // Bindings made with the main password end with the password, a ban, revoke-sessions, deletion.
  credentialsRevoked: async (ctx, { userId }) => revokeBindings(ctx, userId),
  start({ ctx, logger, onConfigChange, rateLimitStore }) {
    const lastError: LastErrors = {}
    const listeners = new ListenerSwitch<GatehouseConfig['ldap'], LdapListeners>(
      {
        inEffect: () => ctx.config().ldap,
        wantedOf: settingsOf,
        open: async (conf, running) => {
          try {
            return await (await loadServer()).startLdap(ctx, logger, rateLimitStore, conf, running ?? undefined)
          } catch (error) {
            const refusal = error instanceof ListenerRefusal ? error : new ListenerRefusal('ldap.address', `ldap: ${messageOf(error)}`)
            lastError[refusal.field === 'ldap.address' ? 'ldap' : 'ldaps'] = { message: refusal.message, at: ctx.clock.now() }
            throw refusal
          }
        },
        // A set a save bound whose listener has closed since is bound again.
        stillBound: (set) => Object.values(set.held).every((listener) => listener.server.listening),
        serving: (next) => {
          if (next) {
            next.serve()
            started.set(ctx, Promise.resolve(next))
            const { bound } = next
            logger.info(`LDAP listening on ldap://${hostPort(bound.address)}${bound.ldaps ? ` and ldaps://${hostPort(bound.ldaps)}` : ''}`)
            // The directory's index is built now, in slices, not at the first search (issue 48).
            void import('./directory-index.js').then(({ indexesOf }) => indexesOf(ctx).warm())
          } else started.delete(ctx)
        },
        keptServing: '(the LDAP listeners keep serving on their addresses)',
      },
      logger,
    )
    controls.set(ctx, {
      bind: (next) => listeners.bindForSave(next.ldap),
      states: () => listenerStates(ctx.config().ldap, listeners.running, lastError),
    })
    const first = listeners.start(ctx.config().ldap)
    // At start `ready` reports a failure and stops start-up.
    if (first) started.set(ctx, first)
    const unsubscribe = onConfigChange?.(() => listeners.apply())
    return async () => {
      unsubscribe?.()
      await listeners.stop()
      controls.delete(ctx)
    }
  },
  ready(ctx) {
    const listening = started.get(ctx)
    return listening?.then(() => undefined)
  },
  bindListeners: async (ctx, next) => controls.get(ctx)?.bind(next),
  listeners: (ctx) => controls.get(ctx)?.states() ?? [],
  // Removing a role the directory lets search asks first; the config check then refuses the save until it is taken out.
  namedRoles: (ctx) =>
    ctx.config().ldap.searchRoles.map((name) => ({
      where: 'ldap.searchRoles',
      name,
      effect:
        'only a role that exists may search the whole directory, so the save is refused until it is taken out of the roles that may search',
    })),
})
