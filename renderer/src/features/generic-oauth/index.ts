import { definePanelFeature } from '../panel-feature'

/**
 * The generic-oauth feature in the control panel (renderer/src/features/panel-feature.ts): its
 * providers are added, tested and removed in the Providers view (GenericProviders.tsx, shown by
 * the social folder's page).
 */
export const genericOAuthPanel = definePanelFeature({
  name: 'generic-oauth',
  editedElsewhere: {
    genericOAuth: 'the Providers view (generic OAuth / OpenID Connect providers)',
  },
})
