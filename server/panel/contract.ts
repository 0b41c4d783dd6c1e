import { z } from 'zod'
import { featureContracts } from '../features/panel-contracts.js'
import { mutation, none, ok, type OpDef, query } from './op.js'
import { auditEventSchema, peopleSchema } from './shapes.js'

export type { OpDef } from './op.js'

/**
 * The control panel's operation contract: every operation is declared once, here, with the zod
 * schema of its input and of its output. Electron main registers each one on IPC, the browser
 * panel's loopback server (server/panel/http.ts) serves each one over HTTP, and the renderer calls
 * them through one typed client. This module is shared with the renderer: zod only, no Node APIs.
 *
 * Times cross the boundary as epoch milliseconds (JSON-safe for the HTTP transport).
 */

const ms = z.number()
const id = z.string().min(1).max(200)
const json = z.record(z.string(), z.unknown())

// ---------------------------------------------------------------- shared shapes

export { type AuditEventView, auditEventSchema, type PersonView, peopleSchema, personSchema } from './shapes.js'

/** One step of the first-run checklist on the overview. */
export const setupStepSchema = z.object({
  id: z.enum(['baseURL', 'trustedOrigin', 'smtp', 'admin']),
  done: z.boolean(),
  /** What is set now (the base URL, the first origin, the SMTP host, the admin's email), if anything. */
  value: z.string().nullable(),
})
export type SetupStep = z.infer<typeof setupStepSchema>

export const auditFilterSchema = z
  .object({
    type: z.string().max(200).optional(),
    /** A user id or an email address (matched as actor, target, or the email a failed sign-in named). */
    user: z.string().max(320).optional(),
    ip: z.string().max(100).optional(),
    outcome: z.enum(['success', 'failure']).optional(),
    from: ms.optional(),
    to: ms.optional(),
  })
  .strict()
export type AuditFilter = z.infer<typeof auditFilterSchema>

export const activityBucketSchema = z.object({ start: ms, signIns: z.number(), failures: z.number() })

export const providerViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  /** off: no client id; configured: a client id but turned off; enabled: in use. */
  status: z.enum(['off', 'configured', 'enabled']),
  clientId: z.string(),
  /** The secret never leaves the server: only whether one is stored. */
  hasClientSecret: z.boolean(),
  scopes: z.array(z.string()),
  trustedForLinking: z.boolean(),
  overrides: z.record(z.string(), z.string()),
  redirectURI: z.string(),
  overridableEndpoints: z.array(z.string()),
})
export type ProviderView = z.infer<typeof providerViewSchema>

export const mailRowSchema = z.object({
  id: z.string(),
  to: z.string(),
  subject: z.string(),
  kind: z.string(),
  status: z.enum(['queued', 'sent', 'failed']),
  error: z.string().nullable(),
  attempts: z.number(),
  createdAt: ms,
  updatedAt: ms,
  sentAt: ms.nullable(),
})

export const settingsIssueSchema = z.object({ path: z.string(), message: z.string() })

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
    }),
  ),
  'overview.get': query(
    'Counts, sign-in activity and the latest audit events',
    z.object({ range: z.enum(['hours', 'days']).default('hours') }).strict(),
    z.object({
      counts: z.object({
        users: z.number(),
        activeSessions: z.number(),
        organizations: z.number(),
        bannedUsers: z.number(),
      }),
      activity: z.array(activityBucketSchema),
      recent: z.array(auditEventSchema),
      people: peopleSchema,
      /** The first-run checklist: shown until every step is done. */
      setup: z.array(setupStepSchema),
    }),
  ),

  // Settings
  'settings.get': query(
    'The effective configuration, the stored layer and the keys start-up options override',
    none,
    z.object({
      effective: json,
      stored: json,
      /** Dotted paths whose effective value comes from --config, flags or the environment. */
      overridden: z.array(z.string()),
      /** Keys that only apply at start-up (changing them needs a restart). */
      restartRequired: z.array(z.string()),
    }),
  ),
  'settings.update': mutation(
    'Validates a partial change with the config schema and applies it live',
    z.object({ patch: json }).strict(),
    z.object({ effective: json, overridden: z.array(z.string()) }),
  ),
  'settings.validate': query(
    'Validates a partial change without applying it',
    z.object({ patch: json }).strict(),
    z.object({ valid: z.boolean(), issues: z.array(settingsIssueSchema) }),
  ),

  // Brute-force locks (docs/SECURITY.md)
  'security.locks': query(
    'Identifiers locked right now by the per-account password throttle',
    none,
    z.object({ locks: z.array(z.object({ key: z.string(), failures: z.number(), lockedUntil: ms })) }),
  ),
  'security.unlock': mutation('Lifts the lock of one identifier (e.g. email:ada@example.com)', z.object({ key: z.string().min(1).max(400) }).strict(), ok),

  // Audit log
  'audit.list': query(
    'Audit events matching a filter, newest first',
    auditFilterSchema.extend({
      limit: z.number().int().min(1).max(500).default(50),
      offset: z.number().int().min(0).default(0),
    }),
    z.object({ events: z.array(auditEventSchema), total: z.number(), people: peopleSchema }),
  ),
  'audit.types': query('Event types present in the log', none, z.array(z.string())),
  'audit.export': query(
    'Every event matching a filter as a CSV or JSON file',
    auditFilterSchema.extend({ format: z.enum(['csv', 'json']) }),
    z.object({ filename: z.string(), mime: z.string(), content: z.string(), count: z.number() }),
  ),
  'audit.exportPage': query(
    'One page of an export of every event matching a filter, newest first: the client asks page after page (after = the cursor returned) until done, showing progress against total',
    auditFilterSchema.extend({
      format: z.enum(['csv', 'json']),
      after: z.object({ createdAt: ms, id: z.number().int() }).nullable().default(null),
      size: z.number().int().min(1).max(5000).default(1000),
    }),
    z.object({
      /** CSV lines (the header on the first page) or JSON array items joined with ",\n" (the client adds the brackets). */
      content: z.string(),
      count: z.number(),
      total: z.number(),
      next: z.object({ createdAt: ms, id: z.number().int() }).nullable(),
      filename: z.string(),
      mime: z.string(),
    }),
  ),

  // Providers
  'providers.list': query('The social providers and their settings', none, z.array(providerViewSchema)),
  'providers.update': mutation(
    "Saves a provider's settings (a missing clientSecret keeps the stored one)",
    z
      .object({
        id: z.string().min(1).max(40),
        enabled: z.boolean(),
        clientId: z.string().max(500),
        clientSecret: z.string().max(4000).optional(),
        scopes: z.array(z.string().min(1).max(200)).max(50),
        trustedForLinking: z.boolean(),
        overrides: z.record(z.string(), z.string().max(2000)),
      })
      .strict(),
    providerViewSchema,
  ),
  'providers.testSignIn': mutation(
    "Starts a test sign-in: the provider's authorization URL to open and the id to read the outcome with (nobody is signed in)",
    z.object({ id: z.string().min(1).max(40) }).strict(),
    z.object({ url: z.string(), testId: z.string() }),
  ),
  'providers.testResult': query(
    'The outcome of a test sign-in: pending until the provider calls back, then success or the error code',
    z.object({ testId: z.string().min(1).max(100) }).strict(),
    z.object({
      status: z.enum(['pending', 'success', 'failure']),
      code: z.string().nullable(),
      profile: z.object({ id: z.string(), name: z.string(), email: z.string().nullable(), emailVerified: z.boolean() }).nullable(),
    }),
  ),

  // Email
  'email.get': query(
    'SMTP settings (password write-only) and the message kinds',
    none,
    z.object({
      smtp: z.object({
        host: z.string(),
        port: z.number(),
        secure: z.boolean(),
        user: z.string(),
        hasPassword: z.boolean(),
        from: z.string(),
      }),
      configured: z.boolean(),
      templates: z.array(z.string()),
    }),
  ),
  'email.update': mutation(
    'Saves SMTP settings (a missing password keeps the stored one)',
    z
      .object({
        host: z.string().max(300),
        port: z.number().int().min(0).max(65535),
        secure: z.boolean(),
        user: z.string().max(300),
        password: z.string().max(1000).optional(),
        from: z.string().max(320),
      })
      .strict(),
    ok,
  ),
  'email.sendTest': mutation(
    'Sends a test message through the configured SMTP server',
    z.object({ to: z.string().min(3).max(320) }).strict(),
    z.object({ id: z.string().nullable(), status: z.string() }),
  ),
  'email.preview': query(
    'Renders a template with sample data',
    z.object({ kind: z.string().min(1).max(60) }).strict(),
    z.object({ subject: z.string(), text: z.string(), html: z.string() }),
  ),
  'email.outbox': query(
    'Messages in the outbox, newest first',
    z
      .object({
        status: z.enum(['queued', 'sent', 'failed']).optional(),
        limit: z.number().int().min(1).max(500).default(50),
        offset: z.number().int().min(0).default(0),
      })
      .strict(),
    z.object({ messages: z.array(mailRowSchema), total: z.number() }),
  ),
  'email.retry': mutation('Queues a failed message again', z.object({ id }).strict(), ok),
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
