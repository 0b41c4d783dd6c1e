import { IconNetwork } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The network feature in the control panel (renderer/src/features/panel-feature.ts). */
export const networkPanel = definePanelFeature({
  name: 'network',
  views: [{ name: 'network', label: 'Network', icon: IconNetwork, Page: lazy(() => import('./NetworkPage')) }],
})
