import { defineFeature } from '../../feature.js'
import { networkPanel } from './panel.js'
import { networkErrors } from './errors.js'

/**
 * Network: where the API listens (loopback, one LAN interface or all), its port and public base
 * URL, edited from the control panel and applied by restarting the HTTP listener only. Stored in
 * the data directory's network.json; flags and GATEHOUSE_* variables win over it.
 */
export const networkFeature = defineFeature({
  id: 'network',
  errors: networkErrors,
  panel: networkPanel as never,
})

export { registerNetworkRuntime } from './runtime.js'
export { readNetworkSettings, resolveNetwork, type NetworkOverrides } from './settings.js'
