import type { AuthContext } from '../../core/context.js'
import { revokeBindings } from './revocations.js'
import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'
import { LDAP_ERRORS } from './errors.js'
import { ldapPanel } from './panel.js'
import type { LdapListeners } from './server.js'
import { ldapMetrics } from './metrics.js'

/** Each server's LDAP listeners once bound (tests, the start-up line and `ready` read it). */
const started = new WeakMap<AuthContext, Promise<LdapListeners>>()

/** The LDAP listeners' addresses, once bound; undefined when LDAP is off. */
export async function ldapListening(ctx: AuthContext): Promise<LdapListeners['bound'] | undefined> {
  return (await started.get(ctx))?.bound
}

/** The listener's module (with the panel's bind-and-search test), loaded when LDAP is switched on or tested. */
const loadServer = () => import('./server.js')

/**
 * The LDAP interface (issue 36, docs/LDAP.md): a read-only directory of the same users and groups
 * for everything that speaks LDAP (NAS, hypervisor, media servers, Nextcloud, Apache). With
 * `ldap.enabled` the start hook loads the codec and opens the listeners; off, none of its modules
 * (nor the @ldapjs packages) is loaded, so a disabled LDAP costs nothing at start-up. The switch and
 * the addresses apply live: a change opens, closes or reopens the listeners.
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
    /** The listeners that run, under the settings they were opened with; changes are applied one at a time. */
    let running: { settings: string; listening: Promise<LdapListeners> } | null = null
    let applying: Promise<void> = Promise.resolve()
    const settingsOf = (): string | null => {
      const { enabled, address, ldapsAddress, tls } = ctx.config().ldap
      return enabled ? JSON.stringify({ address, ldapsAddress, tls }) : null
    }
    const open = (settings: string, live: boolean) => {
      const listening = loadServer().then(({ startLdap }) => startLdap(ctx, logger, rateLimitStore))
      running = { settings, listening }
      started.set(ctx, listening)
      listening.then(
        ({ bound }) => {
          const at = (a: { host: string; port: number }) => `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`
          logger.info(`LDAP listening on ldap://${at(bound.address)}${bound.ldaps ? ` and ldaps://${at(bound.ldaps)}` : ''}`)
        },
        // At start `ready` reports it and stops start-up; a live change is refused in the log.
        (error: unknown) => {
          if (live) logger.error(`ldap: ${error instanceof Error ? error.message : String(error)}`)
        },
      )
    }
    const close = async () => {
      const listeners = await running?.listening.catch(() => null)
      running = null
      started.delete(ctx)
      await listeners?.close()
    }
    // A live switch (the panel's LDAP view, another instance's change): open, close or reopen.
    const apply = () => {
      applying = applying.then(async () => {
        const wanted = settingsOf()
        if (wanted === (running?.settings ?? null)) return
        await close()
        if (wanted) open(wanted, true)
      })
    }
    const initial = settingsOf()
    if (initial) open(initial, false)
    const unsubscribe = onConfigChange?.(apply)
    if (!initial && !unsubscribe) return undefined
    return async () => {
      unsubscribe?.()
      await applying
      await close()
    }
  },
  ready(ctx) {
    const listening = started.get(ctx)
    return listening?.then(() => undefined)
  },
})
