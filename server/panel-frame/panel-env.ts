import type { PanelCaller } from '../core/panel-caller.js'
import type { Gatehouse } from '../instance.js'
import type { Logger } from '../log.js'

// Apart from env.ts (the handler types, which need every feature's contract): the feature frame
// (feature.ts) names PanelEnv, and must not reach the features' contract aggregation through it.
/** What the panel operations run against: the same Gatehouse the HTTP API serves. */
export interface PanelEnv {
  gatehouse: Gatehouse
  /** The API URL (origin + base path) as it is reachable now. */
  apiURL(): string
  mode: 'desktop' | 'browser'
  version: string
  /** Wall-clock start time (uptime); domain timestamps use the injected clock. */
  startedAt: number
  logger: Logger
  /**
   * Who runs an operation dispatched without a caller of its own: the desktop app's OS account
   * (main/app.ts). The browser panel names the signed-in admin on every dispatch.
   */
  operator?: PanelCaller
}
