import type { z } from 'zod'
import type { OpDef } from './op.js'
import type { PanelEnv } from './panel-env.js'

export type { PanelEnv } from './panel-env.js'

/** Panel operations by name: a feature's own contract (its panel-contract.ts), or the whole one. */
export type Ops = Record<string, OpDef>

/** The handler of one operation, typed by its definition. */
export type Handler<D extends OpDef> = (input: z.output<D['input']>) => Promise<z.output<D['output']>> | z.output<D['output']>
/** A handler for every operation of `C`. */
export type HandlersOf<C extends Ops> = { [K in keyof C]: Handler<C[K]> }
/**
 * Handlers of some operations `K` of a contract `C`, made with the panel's environment. Keyed on the
 * contract it is given (a feature gives its own), so the frame names no aggregation of the features.
 */
export type HandlerGroup<C extends Ops, K extends keyof C = keyof C> = (env: PanelEnv) => { [P in K]: Handler<C[P]> }
