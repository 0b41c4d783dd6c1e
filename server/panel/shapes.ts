import { z } from 'zod'

/**
 * Shapes several panel views share (the audit log, the overview, a user's page): zod only, shared
 * with the renderer. Times cross the boundary as epoch milliseconds.
 */

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
  createdAt: z.number(),
})
export type AuditEventView = z.infer<typeof auditEventSchema>

/** The person an event names, shown instead of the bare id. */
export const personSchema = z.object({ id: z.string(), name: z.string(), email: z.string() })
export type PersonView = z.infer<typeof personSchema>
/** The people a list of events names, by user id. */
export const peopleSchema = z.record(z.string(), personSchema)
