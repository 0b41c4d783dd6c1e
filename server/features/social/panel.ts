import type { AuthContext } from '../../core/context.js'
import { lastConfigChange } from '../../core/config-audit.js'
import { APIError } from '../../core/errors.js'
import { refuseStale, staleObjectFields } from '../../core/object-revisions.js'
import { explainExtraProvider } from '../../extra-oauth-providers.js'
import type { PanelEnv } from '../../panel-frame/env.js'
import { providerPanelError } from './errors.js'
import { resolveProvider, sealClientSecret, startAuthorization } from './flow.js'
import { isProviderId, PROVIDER_ENDPOINTS, PROVIDER_IDS, type ProviderId, type ProviderOptions } from './options.js'
import type { ProviderView } from './panel-contract.js'
import { providers } from './providers/index.js'
import { readTestResult } from './state.js'

interface ProviderUpdate {
  id: string
  enabled?: boolean
  clientId?: string
  clientSecret?: string
  scopes?: string[]
  trustedForLinking?: boolean
  overrides?: Record<string, string>
  /** Each field given as the view read it (its view's values). */
  base?: Record<string, unknown>
}

/** Where each field of the view is kept, for who changed it (the trusted list is one for every provider). */
function whoChangedField(ctx: PanelEnv['gatehouse']['ctx'], id: ProviderId) {
  const paths: Record<string, string> = { enabled: 'enabled', clientId: 'clientId', scopes: 'scope', overrides: 'endpoints' }
  return (field: string) =>
    field === 'trustedForLinking'
      ? lastConfigChange(ctx, 'account.accountLinking.trustedProviders', (from, to) => {
          const has = (list: unknown) => Array.isArray(list) && list.includes(id)
          return has(from) !== has(to)
        })
      : lastConfigChange(ctx, `socialProviders.${id}.${paths[field] ?? field}`)
}

/** What the Providers view shows of one provider: the effective switch, the status, never the secret. */
function providerView(ctx: AuthContext, id: ProviderId): ProviderView {
  const config = ctx.config()
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

/** The Providers view: the same config store and flow as the HTTP API, no rules here. */
export const socialPanel = (env: PanelEnv) => {
  const { ctx, config: store } = env.gatehouse

  const view = (id: ProviderId) => providerView(ctx, id)

  return {
    'providers.list'(): ProviderView[] {
      return PROVIDER_IDS.map(view)
    },

    async 'providers.update'({ base, ...input }: ProviderUpdate): Promise<ProviderView> {
      const { id } = input
      if (!isProviderId(id)) throw providerPanelError.notFound(id)
      const names = PROVIDER_ENDPOINTS[id] as readonly string[]
      const unknown = Object.keys(input.overrides ?? {}).find((n) => !names.includes(n))
      if (unknown) throw providerPanelError.notAnEndpoint(id, unknown)
      // Only the fields given change, and only over what this admin read (issue 50 §1).
      const shown = { ...view(id) }
      if (staleObjectFields(shown, { ...input }, base).length > 0)
        await refuseStale(ctx, whoChangedField(ctx, id), shown, { ...input }, base)
      const config = ctx.config()
      const options = config.socialProviders[id] as ProviderOptions | undefined
      // A field left out keeps what the admin saw. For the switch that is the effective state, not
      // the stored flag: a provider never configured is shown off, while its stored `enabled`
      // defaults to true, so giving it a client id alone would switch it on unasked.
      const enabled = input.enabled ?? shown.enabled
      if (enabled && !(input.clientId ?? options?.clientId)) throw providerPanelError.clientIdRequired()
      const trusted = config.account.accountLinking.trustedProviders.filter((p) => p !== id)
      if (input.trustedForLinking ?? config.account.accountLinking.trustedProviders.includes(id)) trusted.push(id)
      try {
        store.update({
          socialProviders: {
            [id]: {
              enabled,
              ...(input.clientId !== undefined ? { clientId: input.clientId } : {}),
              // Sealed (AES-256-GCM, key derived from the auth secret) before it reaches config.json.
              ...(input.clientSecret ? { clientSecret: sealClientSecret(ctx, input.clientSecret) } : {}),
              ...(input.scopes !== undefined ? { scope: input.scopes } : {}),
              // Every endpoint named: an empty override is removed (undefined), a URL set.
              ...(input.overrides ? { endpoints: Object.fromEntries(names.map((n) => [n, input.overrides?.[n] || undefined])) } : {}),
            },
          },
          ...(input.trustedForLinking !== undefined ? { account: { accountLinking: { trustedProviders: trusted } } } : {}),
        })
      } catch (e) {
        // The config schema names the field: socialProviders.<id>.endpoints.token: Invalid URL
        const message = (e as Error).message.replace(/^configuration: /, '')
        const path = message.split(':')[0] ?? ''
        const field = path
          .replace(`socialProviders.${id}.`, '')
          .replace(/^endpoints\./, 'overrides.')
          .replace(/^scope/, 'scopes')
        throw providerPanelError.invalidConfig(message, field, message.slice(path.length + 2))
      }
      return view(id)
    },

    async 'providers.testSignIn'({ id }: { id: string }) {
      // A provider that is configured but off can be tried before it is turned on; a generic
      // OAuth provider (Feature.oauthProviders) is tried the same way.
      const rp = await resolveProvider(ctx, id, true)
      if (!rp && !isProviderId(id)) {
        // Offered but unusable (a generic provider's discovery unreachable): said so, not "not found".
        const problem = await explainExtraProvider(ctx, id)
        if (problem) throw providerPanelError.unavailable(problem)
        throw providerPanelError.notFound(id)
      }
      if (!rp?.clientId) throw providerPanelError.notConfigured(isProviderId(id) ? providers[id].name : (rp?.def.name ?? id))
      try {
        const { url, state } = await startAuthorization(ctx, rp, { test: true, callbackURL: `${ctx.baseURL}/ok` })
        return { url, testId: state }
      } catch (e) {
        if (e instanceof APIError && e.code === 'CLIENT_ID_AND_SECRET_REQUIRED') throw providerPanelError.secretRequired()
        throw e
      }
    },

    async 'providers.testResult'({ testId }: { testId: string }) {
      const result = await readTestResult(ctx, testId)
      return result
        ? { status: result.outcome, code: result.code, profile: result.profile }
        : { status: 'pending' as const, code: null, profile: null }
    },
  }
}
