import { sealClientSecret } from '../../oauth/flow.js'
import {
  isProviderId,
  PROVIDER_ENDPOINTS,
  PROVIDER_IDS,
  type ProviderId,
  type ProviderOptions,
} from '../../oauth/options.js'
import { providers } from '../../oauth/providers/index.js'
import type { ProviderView } from '../contract.js'
import { PanelError } from '../errors.js'
import type { HandlerGroup } from '../service.js'

export const providerHandlers: HandlerGroup<'providers.list' | 'providers.update'> = (env) => {
  const { ctx, config: store } = env.gatehouse

  const view = (id: ProviderId): ProviderView => {
    const config = store.get()
    const options = config.socialProviders[id] as ProviderOptions | undefined
    const overrides: Record<string, string> = {}
    for (const [name, url] of Object.entries(options?.endpoints ?? {})) if (url) overrides[name] = url
    return {
      id,
      name: providers[id].name,
      enabled: Boolean(options?.enabled && options.clientId),
      clientId: options?.clientId ?? '',
      hasClientSecret: Boolean(options?.clientSecret),
      scopes: options?.scope ?? [],
      trustedForLinking: config.account.accountLinking.trustedProviders.includes(id),
      overrides,
      redirectURI: options?.redirectURI ?? `${ctx.baseURL}/callback/${id}`,
      overridableEndpoints: [...PROVIDER_ENDPOINTS[id]],
    }
  }

  return {
    'providers.list'() {
      return PROVIDER_IDS.map(view)
    },

    'providers.update'(input) {
      const { id } = input
      if (!isProviderId(id)) throw new PanelError(404, 'PROVIDER_NOT_FOUND', `Provider ${id} not found`)
      const names = PROVIDER_ENDPOINTS[id] as readonly string[]
      const unknown = Object.keys(input.overrides).find((n) => !names.includes(n))
      if (unknown) {
        throw new PanelError(400, 'INVALID_CONFIG', `${unknown} is not an endpoint of ${id}`, [
          { path: `overrides.${unknown}`, message: `not an endpoint of ${id}` },
        ])
      }
      if (input.enabled && !input.clientId) {
        throw new PanelError(400, 'INVALID_CONFIG', 'A client id is required to enable the provider', [
          { path: 'clientId', message: 'required to enable the provider' },
        ])
      }
      const config = store.get()
      // Every endpoint named: an empty override is removed (undefined), a URL set.
      const endpoints = Object.fromEntries(names.map((n) => [n, input.overrides[n] || undefined]))
      const trusted = config.account.accountLinking.trustedProviders.filter((p) => p !== id)
      if (input.trustedForLinking) trusted.push(id)
      try {
        store.update({
          socialProviders: {
            [id]: {
              enabled: input.enabled,
              clientId: input.clientId,
              // Sealed (AES-256-GCM, key derived from the auth secret) before it reaches config.json.
              ...(input.clientSecret ? { clientSecret: sealClientSecret(ctx, input.clientSecret) } : {}),
              scope: input.scopes,
              endpoints,
            },
          },
          account: { accountLinking: { trustedProviders: trusted } },
        })
      } catch (e) {
        // The config schema names the field: socialProviders.<id>.endpoints.token: Invalid URL
        const message = (e as Error).message.replace(/^configuration: /, '')
        const path = message.split(':')[0] ?? ''
        const field = path.replace(`socialProviders.${id}.`, '').replace(/^endpoints\./, 'overrides.').replace(/^scope/, 'scopes')
        throw new PanelError(400, 'INVALID_CONFIG', message, [{ path: field, message: message.slice(path.length + 2) }])
      }
      return view(id)
    },
  }
}
