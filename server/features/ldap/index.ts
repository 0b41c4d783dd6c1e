import type { GatehouseConfig } from '../../config/schema.js'
import type { AuthContext } from '../../core/context.js'
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
    /** The listeners that serve, under the settings they were opened with; changes are applied one at a time. */
    let running: { settings: string; listeners: LdapListeners } | null = null
    /** Bound by a save (`bindListeners`), for the change it stores next. */
    let pending: { settings: string; listeners: LdapListeners } | null = null
    let applying: Promise<unknown> = Promise.resolve()
    const lastError: Partial<Record<LdapRole, { message: string; at: number }>> = {}
    const queue = <T>(step: () => Promise<T>): Promise<T> => {
      const done = applying.then(step)
      applying = done.catch(() => undefined)
      return done
    }

    /** Binds what `conf` asks for, taking over the serving listeners on unchanged addresses. */
    const bind = async (conf: GatehouseConfig['ldap']): Promise<LdapListeners> => {
      try {
        return await (await loadServer()).startLdap(ctx, logger, rateLimitStore, conf, running?.listeners)
      } catch (error) {
        const refusal = error instanceof ListenerRefusal ? error : new ListenerRefusal('ldap.address', `ldap: ${messageOf(error)}`)
        lastError[refusal.field === 'ldap.address' ? 'ldap' : 'ldaps'] = { message: refusal.message, at: ctx.clock.now() }
        throw refusal
      }
    }
    /** Makes `next` the serving set (null: none), then closes the one it replaces. */
    const switchTo = async (next: { settings: string; listeners: LdapListeners } | null) => {
      const old = running
      running = next
      if (next) {
        next.listeners.serve()
        started.set(ctx, Promise.resolve(next.listeners))
        const { bound } = next.listeners
        logger.info(`LDAP listening on ldap://${hostPort(bound.address)}${bound.ldaps ? ` and ldaps://${hostPort(bound.ldaps)}` : ''}`)
      } else started.delete(ctx)
      await old?.listeners.close()
    }
    const dropPending = async () => {
      const dropped = pending
      pending = null
      await dropped?.listeners.close()
    }

    // A live switch (the panel's LDAP view, another instance's change, a reload): open, move or close.
    const apply = () =>
      void queue(async () => {
        const conf = ctx.config().ldap
        const wanted = settingsOf(conf)
        if (wanted === (running?.settings ?? null)) return dropPending()
        if (!wanted) {
          await dropPending()
          return switchTo(null)
        }
        // What the save bound for this change; else bound now, the old listeners serving until it is.
        let next = pending?.settings === wanted ? pending.listeners : null
        if (next && Object.values(next.held).some((listener) => !listener.server.listening)) next = null
        if (next) pending = null
        else {
          await dropPending()
          try {
            next = await bind(conf)
          } catch (error) {
            logger.error(`${messageOf(error)}${running ? ' (the LDAP listeners keep serving on their addresses)' : ''}`)
            return
          }
        }
        await switchTo({ settings: wanted, listeners: next })
      })

    controls.set(ctx, {
      bind: (next) =>
        queue(async () => {
          const wanted = settingsOf(next.ldap)
          await dropPending()
          // Only what the save changes: a listener that failed under the settings in effect is not the save's to refuse.
          if (!wanted || wanted === running?.settings || wanted === settingsOf(ctx.config().ldap)) return undefined
          const listeners = await bind(next.ldap)
          pending = { settings: wanted, listeners }
          return {
            release: () =>
              queue(async () => {
                if (pending?.listeners === listeners) await dropPending()
              }),
          }
        }),
      states() {
        const conf = ctx.config().ldap
        const wantsLdaps = conf.enabled && Boolean(conf.ldapsAddress && conf.tls)
        const state = (role: LdapRole, wants: boolean, configured: string | null | undefined): ListenerState => {
          const at = role === 'ldap' ? running?.listeners.bound.address : running?.listeners.bound.ldaps
          const error = lastError[role] ?? null
          return {
            name: role,
            field: role === 'ldap' ? 'ldap.address' : 'ldap.ldapsAddress',
            state: at ? 'listening' : wants && error ? 'failed' : 'stopped',
            address: at ? hostPort(at) : wants ? (configured ?? null) : null,
            connections: at && running ? running.listeners.connections(role) : 0,
            lastError: error,
          }
        }
        return [state('ldap', conf.enabled, conf.address), state('ldaps', wantsLdaps, conf.ldapsAddress)]
      },
    })

    const initial = ctx.config().ldap
    const settings = settingsOf(initial)
    if (settings) {
      const first = queue(async () => {
        const listeners = await bind(initial)
        await switchTo({ settings, listeners })
        return listeners
      })
      // At start `ready` reports a failure and stops start-up.
      started.set(ctx, first)
    }
    const unsubscribe = onConfigChange?.(apply)
    return async () => {
      unsubscribe?.()
      await applying
      await dropPending()
      await switchTo(null)
      controls.delete(ctx)
    }
  },
  ready(ctx) {
    const listening = started.get(ctx)
    return listening?.then(() => undefined)
  },
  bindListeners: async (ctx, next) => controls.get(ctx)?.bind(next),
  listeners: (ctx) => controls.get(ctx)?.states() ?? [],
})
