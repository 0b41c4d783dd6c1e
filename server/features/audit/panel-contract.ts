import { z } from 'zod'
import { none, query } from '../../panel-frame/op.js'
import { auditEventSchema, peopleSchema } from '../../panel-frame/shapes.js'

/** The audit log view's operations (zod only: shared with the renderer). Times are epoch ms. */

const ms = z.number()

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

export const auditContract = {
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
}
