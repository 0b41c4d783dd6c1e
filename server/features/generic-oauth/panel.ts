import { BUILT_IN_PROVIDER_IDS } from '../../core/social-provider-ids.js'
import { lastConfigChange } from '../../core/config-audit.js'
import { refuseStale, staleObjectFields } from '../../core/object-revisions.js'
import { encryptSecret } from '../../crypto/encrypt.js'
import type { PanelEnv } from '../../panel-frame/env.js'
import type { GenericOAuthProviderConfig } from './config.js'
import { discoveryProblem, genericOAuthPanelError } from './errors.js'
import { probeDiscovery } from './discovery.js'
import type { GenericProviderView } from './panel-contract.js'
import { CLIENT_SECRET_PURPOSE } from './providers.js'

/** The 18 built-in providers' ids: a generic provider may not take one from the panel. */
const BUILT_IN = new Set<string>(BUILT_IN_PROVIDER_IDS)

interface GenericProviderSave {
  providerId: string
  name?: string
  discoveryUrl?: string
  authorizationUrl?: string
  tokenUrl?: string
  userInfoUrl?: string
  clientId?: string
  clientSecret?: string
  scopes?: string[]
  pkce?: boolean
  /** Each field given as the view read it (its view's values). */
  base?: Record<string, unknown>
}

type StoredProvider = Record<string, unknown> & { providerId: string }

/** Whether a change of the provider list (old and new, as the config audit logged them) changed one provider's field. */
const changedField = (id: string, field: string) => (from: unknown, to: unknown) => {
  const pick = (list: unknown) => (Array.isArray(list) ? (list as StoredProvider[]).find((p) => p.providerId === id) : undefined)
  return JSON.stringify(pick(from)?.[field] ?? null) !== JSON.stringify(pick(to)?.[field] ?? null)
}

/**
 * The Providers view's generic OAuth providers: `genericOAuth.config` in the config store (the
 * same one the HTTP API reads: a provider added here is offered at once). A test sign-in is the
 * social feature's providers.testSignIn with the provider id.
 */
export const genericOAuthPanel = (env: PanelEnv) => {
  const { ctx, config: store } = env.gatehouse

  const view = (c: GenericOAuthProviderConfig): GenericProviderView => ({
    providerId: c.providerId,
    name: c.name ?? c.providerId,
    discoveryUrl: c.discoveryUrl ?? '',
    authorizationUrl: c.authorizationUrl ?? '',
    tokenUrl: c.tokenUrl ?? '',
    userInfoUrl: c.userInfoUrl ?? '',
    clientId: c.clientId,
    hasClientSecret: Boolean(c.clientSecret),
    scopes: c.scopes,
    pkce: c.pkce,
    redirectURI: c.redirectURI ?? `${ctx.baseURL}/callback/${c.providerId}`,
  })

  /** The providers as stored (what the panel edits), without the defaults the schema fills in. */
  const stored = (): StoredProvider[] => {
    const layer = store.storedLayer() as { genericOAuth?: { config?: StoredProvider[] } }
    return layer.genericOAuth?.config ?? ctx.config().genericOAuth.config.map((c) => ({ ...c }))
  }

  /** The config schema's complaint, moved onto the form field it names (genericOAuth.config.2.tokenUrl: Invalid URL). */
  const refusal = (message: string, id: string) => {
    const path = message.split(':')[0] ?? ''
    const field = path.replace(/^genericOAuth\.config\.\d+\.?/, '') || 'providerId'
    return genericOAuthPanelError.invalidConfig(
      message.replace(/genericOAuth\.config\.\d+/, `genericOAuth ${id}`),
      field,
      message.slice(path.length + 2),
    )
  }

  const write = (list: StoredProvider[], id: string) => {
    try {
      store.update({ genericOAuth: { config: list } })
    } catch (e) {
      throw refusal((e as Error).message.replace(/^configuration: /, ''), id)
    }
  }

  /** Before a save: the schema's checks, then the discovery document (an unreachable one is said so, not saved). */
  const check = async (list: StoredProvider[], next: StoredProvider) => {
    const [problem] = store.problems({ genericOAuth: { config: list } })
    if (problem) throw refusal(`${problem.path}: ${problem.message}`, next.providerId)
    if (typeof next.discoveryUrl !== 'string') return
    const probe = await probeDiscovery(next.discoveryUrl, next.discoveryHeaders as Record<string, string> | undefined)
    if ('problem' in probe) throw genericOAuthPanelError.discovery(discoveryProblem(next.discoveryUrl, probe))
  }

  return {
    'genericOAuth.list'(): GenericProviderView[] {
      return ctx.config().genericOAuth.config.map(view)
    },

    async 'genericOAuth.save'({ base, ...input }: GenericProviderSave): Promise<GenericProviderView> {
      const id = input.providerId
      if (BUILT_IN.has(id)) throw genericOAuthPanelError.builtIn(id)
      /** The list with this provider changed: only the fields given (an empty URL or name removes it). */
      const build = () => {
        const list = stored()
        const index = list.findIndex((p) => p.providerId === id)
        const previous: StoredProvider = index >= 0 ? (list[index] as StoredProvider) : { providerId: id }
        const next: StoredProvider = { ...previous, providerId: id }
        if (input.clientId !== undefined) next.clientId = input.clientId
        if (input.scopes !== undefined) next.scopes = input.scopes
        if (input.pkce !== undefined) next.pkce = input.pkce
        for (const key of ['name', 'discoveryUrl', 'authorizationUrl', 'tokenUrl', 'userInfoUrl'] as const) {
          const value = input[key]
          if (value === undefined) continue
          if (value) next[key] = value
          else delete next[key]
        }
        // Sealed (AES-256-GCM, key derived from the auth secret) before it reaches config.json.
        if (input.clientSecret) next.clientSecret = encryptSecret(ctx.secret, input.clientSecret, CLIENT_SECRET_PURPOSE)
        if (index >= 0) list[index] = next
        else list.push(next)
        return { list, next }
      }
      const first = build()
      await check(first.list, first.next)
      // After the discovery probe: the list as stored now (another provider saved meanwhile stays),
      // and the fields changed only over what this admin read (issue 50 §1), checked and written
      // with nothing awaited between.
      const existing = ctx.config().genericOAuth.config.find((c) => c.providerId === id)
      const shown = existing ? { ...view(existing) } : {}
      if (staleObjectFields(shown, { ...input }, base).length > 0)
        await refuseStale(ctx, (field) => lastConfigChange(ctx, 'genericOAuth.config', changedField(id, field)), shown, { ...input }, base)
      const { list } = build()
      write(list, id)
      const saved = ctx.config().genericOAuth.config.find((c) => c.providerId === id)
      if (!saved) throw genericOAuthPanelError.notFound(id)
      return view(saved)
    },

    'genericOAuth.remove'({ providerId }: { providerId: string }) {
      const list = stored()
      if (!list.some((p) => p.providerId === providerId)) throw genericOAuthPanelError.notFound(providerId)
      write(
        list.filter((p) => p.providerId !== providerId),
        providerId,
      )
      return { success: true }
    },
  }
}
