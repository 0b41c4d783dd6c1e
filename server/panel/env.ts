import type { z } from 'zod'
import type { Gatehouse } from '../instance.js'
import type { PanelCaller } from '../core/panel-caller.js'
import type { Logger } from '../log.js'
import type { Contract, OpName, OpOutput } from './contract.js'

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

type Input<K extends OpName> = z.output<Contract[K]['input']>
export type Handler<K extends OpName> = (input: Input<K>) => Promise<OpOutput<K>> | OpOutput<K>
export type Handlers = { [K in OpName]: Handler<K> }
export type HandlerGroup<K extends OpName> = (env: PanelEnv) => { [P in K]: Handler<P> }
