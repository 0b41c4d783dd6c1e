import { IconKey } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The social feature in the control panel (renderer/src/features/panel-feature.ts). */
export const socialPanel = definePanelFeature({
  name: 'social',
  views: [{ name: 'providers', label: 'Providers', icon: IconKey, Page: lazy(() => import('./ProvidersPage')) }],
  editedElsewhere: {
    socialProviders: 'the Providers view',
  },
})
