import type { z } from 'zod'
import type { PanelEnv } from './panel-env.js'
import type { Contract, OpName, OpOutput } from './contract.js'

export type { PanelEnv } from './panel-env.js'

type Input<K extends OpName> = z.output<Contract[K]['input']>
export type Handler<K extends OpName> = (input: Input<K>) => Promise<OpOutput<K>> | OpOutput<K>
export type Handlers = { [K in OpName]: Handler<K> }
export type HandlerGroup<K extends OpName> = (env: PanelEnv) => { [P in K]: Handler<P> }
