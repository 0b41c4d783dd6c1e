import { IconShieldLock } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The oidc-provider feature in the control panel (renderer/src/features/panel-feature.ts). */
export const oidcProviderPanel = definePanelFeature({
  name: 'oidc-provider',
  views: [{ name: 'sso', label: 'Single sign-on', icon: IconShieldLock, Page: lazy(() => import('./OidcClients')) }],
  editedElsewhere: {
    oidcProvider: 'the Single sign-on view (switch, groups claim, lifetimes)',
  },
})
