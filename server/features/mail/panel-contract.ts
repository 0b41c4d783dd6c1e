import { z } from 'zod'
import { mutation, none, ok, query, readBase, requires } from '../../panel-frame/op.js'

/** The Email view's operations: SMTP settings, template previews, the outbox (zod only: shared with the renderer). */

const id = z.string().min(1).max(200)
const templateSchema = z.object({ subject: z.string().max(200), body: z.string().max(20_000) }).strict()
/** Epoch milliseconds. */
const ms = z.number()

export const mailRowSchema = z.object({
  id: z.string(),
  to: z.string(),
  subject: z.string(),
  kind: z.string(),
  status: z.enum(['queued', 'sending', 'sent', 'failed']),
  error: z.string().nullable(),
  attempts: z.number(),
  createdAt: ms,
  updatedAt: ms,
  sentAt: ms.nullable(),
})

export const mailContract = {
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
      /** Set by start-up options, read-only here: the --smtp-url flag (password left out) and the mail keys --config or the environment set. */
      startup: z.object({ smtpUrl: z.string().nullable(), keys: z.array(z.string()) }),
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
    'Renders a template with sample data (as edited and saved, or the unsaved draft given)',
    z.object({ kind: z.string().min(1).max(60), draft: templateSchema.optional() }).strict(),
    z.object({ subject: z.string(), text: z.string(), html: z.string() }),
  ),
  'email.templates': query(
    'Every message kind with its subject and body as the editor shows them (edited or built in) and the placeholders it takes',
    none,
    z.array(
      z.object({
        kind: z.string(),
        subject: z.string(),
        body: z.string(),
        /** Edited (stored in mail.templates) rather than the built-in message. */
        custom: z.boolean(),
        placeholders: z.array(z.object({ name: z.string(), description: z.string() })),
      }),
    ),
  ),
  'email.saveTemplate': mutation(
    'Saves the subject and body of one message kind (placeholders checked); the outbox uses it for new messages. A field not given keeps what the editor shows; with `base` (each field given as the editor showed it), refused (409 CONFLICT) when another admin changed one since',
    z
      .object({
        kind: z.string().min(1).max(60),
        subject: z.string().max(200).optional(),
        body: z.string().max(20_000).optional(),
        base: readBase,
      })
      .strict(),
    ok,
  ),
  'email.resetTemplate': mutation(
    'Returns one message kind to its built-in subject and body; with `base` (subject and body as the editor showed them), refused (409 CONFLICT) when another admin changed one since',
    z.object({ kind: z.string().min(1).max(60), base: readBase }).strict(),
    ok,
  ),
  'email.outbox': query(
    'Messages in the outbox, newest first',
    z
      .object({
        status: z.enum(['queued', 'sending', 'sent', 'failed']).optional(),
        limit: z.number().int().min(1).max(500).default(50),
        offset: z.number().int().min(0).default(0),
      })
      .strict(),
    z.object({ messages: z.array(mailRowSchema), total: z.number() }),
  ),
  'email.retry': mutation('Queues a failed message again', z.object({ id }).strict(), ok),
  // Its links sign the recipient in: the permission that allows acting as another user.
  'email.message': requires(
    ['user', 'impersonate'],
    query(
      'One message with its text and links (development mail: only while no SMTP server is configured)',
      z.object({ id }).strict(),
      mailRowSchema.extend({ text: z.string(), links: z.array(z.string()) }),
    ),
  ),
}
