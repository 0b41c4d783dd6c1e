import { APIError } from '../../auth/errors.js'
import { resolveProvider, sealClientSecret, startAuthorization } from '../../oauth/flow.js'
import {
  isProviderId,
  PROVIDER_ENDPOINTS,
  PROVIDER_IDS,
  type ProviderId,
  type ProviderOptions,
} from '../../oauth/options.js'
import { providers } from '../../oauth/providers/index.js'
import { readTestResult } from '../../oauth/state.js'
import type { ProviderView } from '../contract.js'
import { PanelError } from '../errors.js'
import type { HandlerGroup } from '../service.js'

type ProviderOps = 'providers.list' | 'providers.update' | 'providers.testSignIn' | 'providers.testResult'

export const providerHandlers: HandlerGroup<ProviderOps> = (env) => {
  const { ctx, config: store } = env.gatehouse

  const view = (id: ProviderId): ProviderView => {
    const config = store.get()
    const options = config.socialProviders[id] as ProviderOptions | undefined
    const overrides: Record<string, string> = {}
    for (const [name, url] of Object.entries(options?.endpoints ?? {})) if (url) overrides[name] = url
    const enabled = Boolean(options?.enabled && options.clientId)
    return {
      id,
      name: providers[id].name,
      enabled,
      status: enabled ? 'enabled' : options?.clientId ? 'configured' : 'off',
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

    async 'providers.testSignIn'({ id }) {
      if (!isProviderId(id)) throw new PanelError(404, 'PROVIDER_NOT_FOUND', `Provider ${id} not found`)
      // A provider that is configured but off can be tried before it is turned on.
      const rp = resolveProvider(ctx, id, true)
      if (!rp?.clientId) throw new PanelError(400, 'PROVIDER_NOT_CONFIGURED', `Set a client id for ${providers[id].name} first`)
      try {
        const { url, state } = await startAuthorization(ctx, rp, { test: true, callbackURL: `${ctx.baseURL}/ok` })
        return { url, testId: state }
      } catch (e) {
        if (e instanceof APIError) throw new PanelError(400, e.code, e.code === 'CLIENT_ID_AND_SECRET_REQUIRED' ? 'A client secret is required first' : e.message)
        throw e
      }
    },

    'providers.testResult'({ testId }) {
      const result = readTestResult(ctx, testId)
      return result ? { status: result.outcome, code: result.code, profile: result.profile } : { status: 'pending' as const, code: null, profile: null }
    },
  }
}
