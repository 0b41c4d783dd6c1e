import type { AuthContext } from '../../core/context.js'
import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'
import type { LdapListeners } from './server.js'

/** Each server's LDAP listeners once bound (tests, the start-up line and `ready` read it). */
const started = new WeakMap<AuthContext, Promise<LdapListeners>>()

/** The LDAP listeners' addresses, once bound; undefined when LDAP is off. */
export async function ldapListening(ctx: AuthContext): Promise<LdapListeners['bound'] | undefined> {
  return (await started.get(ctx))?.bound
}

/**
 * The LDAP interface (issue 36, docs/LDAP.md): a read-only directory of the same users and groups
 * for everything that speaks LDAP (NAS, hypervisor, media servers, Nextcloud, Apache). With
 * `ldap.enabled` the start hook loads the codec and opens the listeners; off, none of its modules
 * (nor the @ldapjs packages) is loaded, so a disabled LDAP costs nothing at start-up.
 */
export const ldapFeature = defineFeature({
  id: 'ldap',
  config: configSections,
  start({ ctx, logger }) {
    if (!ctx.config().ldap.enabled) return undefined
    const listening = import('./server.js').then(({ startLdap }) => startLdap(ctx, logger))
    started.set(ctx, listening)
    listening.then(
      ({ bound }) => {
        const at = (a: { host: string; port: number }) => `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`
        logger.info(`LDAP listening on ldap://${at(bound.address)}${bound.ldaps ? ` and ldaps://${at(bound.ldaps)}` : ''}`)
      },
      () => {}, // `ready` reports it, and stops start-up.
    )
    return async () => {
      const listeners = await listening.catch(() => null)
      await listeners?.close()
    }
  },
  ready(ctx) {
    const listening = started.get(ctx)
    return listening?.then(() => undefined)
  },
})
