import { IconChartLine } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The metrics feature in the control panel (renderer/src/features/panel-feature.ts): its view shows the listener and edits `metrics.*`. */
export const metricsPanel = definePanelFeature({
  name: 'metrics',
  views: [{ name: 'metrics', label: 'Metrics', icon: IconChartLine, Page: lazy(() => import('./MetricsView')) }],
  editedElsewhere: {
    metrics: 'the Metrics view (switch and address, applied live); --metrics-address / GATEHOUSE_METRICS_ADDRESS set it at start-up',
  },
})
