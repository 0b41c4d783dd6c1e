import type { PanelEnv } from '../../panel-frame/env.js'
import { samlProtocol } from './lazy.js'
import type { ServiceProviderInput, ServiceProviderPatch } from './service-providers.js'

const PANEL_META = { ipAddress: null, userAgent: 'gatehouse-panel' }
const BY = { via: 'panel' as const, meta: PANEL_META }
/** Loaded at the first use, with the protocol code (the panel's registration loads nothing of SAML). */
const sps = samlProtocol

export const samlPanel = (env: PanelEnv) => {
  const ctx = env.gatehouse.ctx
  return {
    'saml.serviceProviders': async () => {
      const { allServiceProviders, viewOf } = await sps()
      return {
        serviceProviders: (await allServiceProviders(ctx)).map(viewOf),
        metadataUrl: `${ctx.baseURL}/saml/metadata`,
        entityId: `${ctx.baseURL}/saml/metadata`,
        enabled: ctx.config().saml.enabled,
      }
    },
    'saml.fetchMetadata': async ({ url }: { url: string }) => ({ metadataXml: await (await sps()).fetchMetadata(url) }),
    'saml.createServiceProvider': async (input: ServiceProviderInput) => (await sps()).createServiceProvider(ctx, input, BY),
    'saml.updateServiceProvider': async ({ id, base, ...patch }: ServiceProviderPatch & { id: string; base?: Record<string, unknown> }) =>
      (await sps()).changeServiceProvider(ctx, id, patch, BY, base),
    'saml.deleteServiceProvider': async ({ id }: { id: string }) => {
      await (await sps()).removeServiceProvider(ctx, id, BY)
      return { success: true }
    },
  }
}
