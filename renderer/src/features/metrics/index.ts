import { definePanelFeature } from '../panel-feature'

/** The metrics feature in the control panel (renderer/src/features/panel-feature.ts). */
export const metricsPanel = definePanelFeature({
  name: 'metrics',
  editedElsewhere: {
    metrics: 'read at start-up: --metrics-address / GATEHOUSE_METRICS_ADDRESS (or --config) and a restart',
  },
})
