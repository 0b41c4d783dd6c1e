import { z } from 'zod'
import { query } from '../../panel-frame/op.js'
import { auditEventSchema, peopleSchema } from '../../panel-frame/shapes.js'

/** The overview's operation (zod only: shared with the renderer). Times are epoch ms. */

const ms = z.number()

/** One step of the first-run checklist on the overview. */
export const setupStepSchema = z.object({
  id: z.enum(['baseURL', 'trustedOrigin', 'smtp', 'admin']),
  done: z.boolean(),
  /** What is set now (the base URL, the first origin, the SMTP host, the admin's email), if anything. */
  value: z.string().nullable(),
})
export type SetupStep = z.infer<typeof setupStepSchema>

export const storageOutageSchema = z.object({
  code: z.enum(['DATABASE_UNAVAILABLE', 'STORAGE_FULL', 'DATABASE_NOT_WRITABLE']),
  message: z.string(),
  /** What the driver said. */
  cause: z.string(),
  since: ms,
})
export type StorageOutageView = z.infer<typeof storageOutageSchema>

export const activityBucketSchema = z.object({ start: ms, signIns: z.number(), failures: z.number() })

/** One listener besides the HTTP one (LDAP, LDAPS, metrics) and its state now. */
export const listenerStateSchema = z.object({
  name: z.string(),
  /** The config field its address is set in. */
  field: z.string(),
  state: z.enum(['listening', 'stopped', 'failed']),
  /** Where it listens (`host:port`), else the address it is configured with; null when off. */
  address: z.string().nullable(),
  /** TCP connections open now. */
  connections: z.number(),
  /** The last time its address could not be bound (at start, a save, a change applied), and why. */
  lastError: z.object({ message: z.string(), at: ms }).nullable(),
})
export type ListenerStateView = z.infer<typeof listenerStateSchema>

export const overviewContract = {
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
      /**
       * A storage outage in progress (issue 31 §6): requests that need the database answer 503 with
       * this code. While it lasts the counts, activity and events above are empty (not readable).
       */
      outage: storageOutageSchema.nullable(),
      /** Forward auth: allowed requests per protected app over the last 24 hours, busiest first (refusals are in the audit log). */
      protectedApps: z.array(z.object({ app: z.string(), allowed: z.number() })),
      /**
       * Who may create an account (core/sign-up-gate.ts): `open` when anyone who reaches the server
       * can, through `methods`; `verificationRequired` whether their email must be verified before
       * they sign in, `appsRequireVerified` before the faces vouch for them to apps.
       */
      signUp: z.object({
        mode: z.enum(['open', 'invitation', 'closed']),
        open: z.boolean(),
        methods: z.array(z.string()),
        verificationRequired: z.boolean(),
        appsRequireVerified: z.boolean(),
      }),
    }),
  ),
  'listeners.state': query(
    'The listeners besides the HTTP one (LDAP, LDAPS, metrics): each one’s state (listening, stopped, failed), address, open connections and last error; what the Overview, the LDAP view and the Metrics view show',
    z.object({}).strict(),
    z.object({ listeners: z.array(listenerStateSchema) }),
  ),
}
