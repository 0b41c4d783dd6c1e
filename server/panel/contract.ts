import { z } from 'zod'
import { featureContracts } from '../features/panel-contracts.js'
import { none, type OpDef, query } from '../panel-frame/op.js'

export type { OpDef } from '../panel-frame/op.js'

/**
 * The control panel's operation contract: every operation is declared once, here, with the zod
 * schema of its input and of its output. Electron main registers each one on IPC, the browser
 * panel's loopback server (server/panel/http.ts) serves each one over HTTP, and the renderer calls
 * them through one typed client. This module is shared with the renderer: zod only, no Node APIs.
 *
 * Times cross the boundary as epoch milliseconds (JSON-safe for the HTTP transport).
 */

const ms = z.number()

// ---------------------------------------------------------------- shared shapes

export { type AuditEventView, auditEventSchema, type PersonView, peopleSchema, personSchema } from '../panel-frame/shapes.js'

// Moved to their feature folders; named here for the modules that import them from the contract.
export type { AuditFilter } from '../features/audit/panel-contract.js'
export type { SetupStep } from '../features/overview/panel-contract.js'
export type { ProviderView } from '../features/social/panel-contract.js'

// ---------------------------------------------------------------- the operations

const coreContract = {
  // Server and overview
  'server.info': query(
    'Where the server listens and how it runs',
    none,
    z.object({
      apiURL: z.string(),
      origin: z.string(),
      basePath: z.string(),
      port: z.number(),
      version: z.string(),
      startedAt: ms,
      uptimeSeconds: z.number(),
      databaseFile: z.string(),
      databaseBytes: z.number(),
      mode: z.enum(['desktop', 'browser']),
      /** Panel areas whose domain functions this build has. */
      features: z.object({ admin: z.boolean(), organizations: z.boolean(), providers: z.boolean(), email: z.boolean() }),
      /**
       * Who is running the panel (issue 31 §1): the signed-in admin (browser panel), the OS account
       * (desktop), or the recovery link. `access: 'limited'` is a role holding only some `admin.*`
       * permissions: it reads every view and changes only what its permissions allow.
       */
      caller: z
        .object({
          kind: z.enum(['admin', 'os-account', 'recovery']),
          name: z.string(),
          email: z.string().nullable(),
          role: z.string().nullable(),
          access: z.enum(['full', 'limited']),
          /** The `admin.*` permissions the caller holds (`resource:action`). */
          permissions: z.array(z.string()),
          /**
           * The changes (mutating operations) the caller may run, by the rule the panel refuses
           * by (server/panel/permissions.ts): the renderer hides or disables every other one.
           */
          changes: z.array(z.string()),
        })
        .nullable()
        .optional(),
    }),
  ),
} satisfies Record<string, OpDef>

/** Core operations and those of every feature folder. */
export const contract = { ...coreContract, ...featureContracts } satisfies Record<string, OpDef>

export type Contract = typeof contract
export type OpName = keyof Contract
export type OpInput<K extends OpName> = z.input<Contract[K]['input']>
export type OpOutput<K extends OpName> = z.output<Contract[K]['output']>

export const opNames = Object.keys(contract) as OpName[]

export const isOpName = (value: unknown): value is OpName => typeof value === 'string' && Object.hasOwn(contract, value)

/** A failure as it crosses the boundary: a stable code, a readable message, field issues for forms. */
export interface PanelFailure {
  code: string
  message: string
  status: number
  /** The input field a domain error concerns (APIError.field): forms show the message beside it. */
  field?: string
  issues?: Array<{ path: string; message: string }>
}

/** What every transport carries back: IPC returns it as is, HTTP maps it onto a status code. */
export type PanelResult<T = unknown> = { ok: true; data: T } | { ok: false; error: PanelFailure }

/** The IPC channel of an operation. */
export const channelOf = (op: OpName): string => `gatehouse:${op}`

/** What preload exposes as `window.gatehouse` (typed from the contract; validated in main). */
export interface GatehouseBridge {
  readonly transport: 'ipc'
  call<K extends OpName>(op: K, input: OpInput<K>): Promise<PanelResult<OpOutput<K>>>
  openExternal(url: string): Promise<void>
}
