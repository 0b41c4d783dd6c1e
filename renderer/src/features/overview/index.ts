import { IconGauge } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The overview feature in the control panel (renderer/src/features/panel-feature.ts). */
export const overviewPanel = definePanelFeature({
  name: 'overview',
  views: [{ name: 'overview', label: 'Overview', icon: IconGauge, Page: lazy(() => import('./OverviewPage')) }],
})
