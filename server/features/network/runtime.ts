import type { Gatehouse } from '../../instance.js'
import type { NetworkOverrides } from './settings.js'

/**
 * What the Network panel needs beyond the Gatehouse: where its settings live and which values
 * start-up options fixed. `gatehouse serve` and the desktop app register it once they listen.
 */
export interface NetworkRuntime {
  dataDir: string | null
  overrides: NetworkOverrides
}

const runtimes = new WeakMap<Gatehouse, NetworkRuntime>()

export function registerNetworkRuntime(gatehouse: Gatehouse, runtime: NetworkRuntime): void {
  runtimes.set(gatehouse, runtime)
}

export function networkRuntimeOf(gatehouse: Gatehouse): NetworkRuntime {
  const known = runtimes.get(gatehouse)
  if (known) return known
  return { dataDir: gatehouse.dataDir, overrides: {} }
}
