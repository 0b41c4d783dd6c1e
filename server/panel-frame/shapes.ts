import { z } from 'zod'

/**
 * Shapes several panel contracts share (the core contract and feature contracts alike). Zod only:
 * shared with the renderer. Times are epoch milliseconds.
 */

const ms = z.number()
const json = z.record(z.string(), z.unknown())

export const auditEventSchema = z.object({
  id: z.number(),
  type: z.string(),
  outcome: z.enum(['success', 'failure']),
  actorUserId: z.string().nullable(),
  targetUserId: z.string().nullable(),
  target: z.string().nullable(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  detail: json.nullable(),
  /** The X-Request-Id of the request behind the event (issue 32); null for events without one. */
  requestId: z.string().nullable(),
  createdAt: ms,
})
export type AuditEventView = z.infer<typeof auditEventSchema>

/** The person an event names, shown instead of the bare id. */
export const personSchema = z.object({ id: z.string(), name: z.string(), email: z.string() })
export type PersonView = z.infer<typeof personSchema>
/** The people a list of events names, by user id. */
export const peopleSchema = z.record(z.string(), personSchema)
