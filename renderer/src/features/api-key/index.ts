import { IconKey } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The api-key feature in the control panel (renderer/src/features/panel-feature.ts). */
export const apiKeyPanel = definePanelFeature({
  name: 'api-key',
  views: [{ name: 'api-keys', label: 'API keys', icon: IconKey, Page: lazy(() => import('./ApiKeys')) }],
  editedElsewhere: {
    apiKey: 'the API keys view (its settings card)',
  },
})
