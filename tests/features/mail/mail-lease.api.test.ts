import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { mailOutbox } from '../../../server/db/schema.js'
import { findOutboxMessage, queueMail } from '../../../server/mail/store.js'
import { waitForMailDelivery } from '../../../server/mail/index.js'
import { startTestServer } from '../../helpers/server.js'
import { startSmtpSink } from '../../helpers/smtp.js'

/**
 * The mail queue on the outbox engine (core/outbox.ts): a message claimed (`sending`) by an
 * instance that stopped mid-delivery is leased to it for ten minutes, then any running instance
 * sends it, without a restart; not a moment before.
 */
describe('mail outbox leases', () => {
  it('a message left sending by a stopped instance is sent once its lease lapsed', async () => {
    const sink = await startSmtpSink()
    const server = await startTestServer({ config: { mail: { smtp: { url: sink.url } } } })
    try {
      const ctx = server.gatehouse.ctx
      const row = await queueMail(ctx.db, ctx.clock, {
        to: 'leased@example.com',
        subject: 'Left behind',
        kind: 'test',
        text: 'A message another instance claimed, then stopped.',
        html: '<p>A message another instance claimed, then stopped.</p>',
      })
      // The other instance's claim, made now (its attempt counted).
      await ctx.db.update(mailOutbox).set({ status: 'sending', attempts: 1 }).where(eq(mailOutbox.id, row.id))
      const wake = async () => {
        ctx.mailer.wake?.()
        await waitForMailDelivery(ctx)
      }
      server.clock.advance(10 * 60_000 - 1)
      await wake()
      expect(await findOutboxMessage(ctx.db, row.id)).toMatchObject({ status: 'sending', attempts: 1 })
      expect(sink.inbox).toHaveLength(0)
      server.clock.advance(1)
      await wake()
      expect(await findOutboxMessage(ctx.db, row.id)).toMatchObject({ status: 'sent', attempts: 2, error: null })
      expect((await sink.waitFor('leased@example.com')).subject).toBe('Left behind')
      expect(sink.inbox).toHaveLength(1)
    } finally {
      await server.close()
      await sink.close()
    }
  })
})
