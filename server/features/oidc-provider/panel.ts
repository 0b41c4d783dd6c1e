import type { PanelEnv } from '../../panel-frame/env.js'
import { sectionSettings } from '../../panel-frame/settings-ops.js'
import { connectedApps, revokeConsent } from './consent.js'
import { createRegistrationToken, registrationTokens, revokeRegistration } from './registration.js'
import { allClients, type ClientInput, type ClientPatch, changeClient, createClient, removeClient, rotateClientSecret } from './clients.js'

const PANEL_META = { ipAddress: null, userAgent: 'gatehouse-panel' }
const BY = { via: 'panel' as const, meta: PANEL_META }

export const oidcPanel = (env: PanelEnv) => {
  const ctx = env.gatehouse.ctx
  const settings = sectionSettings(env, 'oidcProvider')
  return {
    'oidc.settings': settings.read,
    'oidc.configure': settings.apply,
    'oidc.clients': async () => ({ clients: await allClients(ctx), issuer: ctx.baseURL, enabled: ctx.config().oidcProvider.enabled }),
    'oidc.createClient': (input: ClientInput) => createClient(ctx, input, BY),
    'oidc.updateClient': ({ clientId, base, ...patch }: ClientPatch & { clientId: string; base?: Record<string, unknown> }) =>
      changeClient(ctx, clientId, patch, BY, base),
    'oidc.rotateSecret': ({ clientId }: { clientId: string }) => rotateClientSecret(ctx, clientId, BY),
    'oidc.registrationTokens': async () => ({
      tokens: await registrationTokens(ctx),
      enabled: ctx.config().oidcProvider.registration.enabled,
    }),
    'oidc.createRegistrationToken': (input: { expiresIn?: number | null; uses?: number | null; label?: string | null }) =>
      createRegistrationToken(ctx, input, BY),
    'oidc.revokeRegistrationToken': async ({ id }: { id: string }) => {
      await revokeRegistration(ctx, id, BY)
      return { success: true }
    },
    'oidc.userApps': async ({ userId }: { userId: string }) => ({ apps: await connectedApps(ctx, userId) }),
    'oidc.revokeUserApp': async ({ userId, clientId }: { userId: string; clientId: string }) => {
      await revokeConsent(ctx, userId, clientId, { via: 'panel', actorUserId: null, meta: PANEL_META })
      return { success: true }
    },
    'oidc.deleteClient': async ({ clientId }: { clientId: string }) => {
      await removeClient(ctx, clientId, BY)
      return { success: true }
    },
  }
}
