import { z } from 'zod'
import type { AuthContext } from '../core/context.js'
import { APIError } from '../core/errors.js'
import { findOutboxMessage, listOutbox, type OutboxPage, type OutboxQuery, type OutboxRow, queueMail, requeueFailed } from './outbox.js'
import { applyMailTemplate } from './custom-templates.js'
import { testEmail } from './templates.js'

/**
 * What the control panel calls for mail: the outbox list, retrying failed messages and a test
 * email. Each takes the same AuthContext as the domain; delivery itself runs in the mailer.
 */

export type { OutboxPage, OutboxQuery, OutboxRow, OutboxStatus } from './outbox.js'
export { OutboxMailer, smtpSettings } from './outbox.js'

export async function listMailOutbox(ctx: AuthContext, query: OutboxQuery = {}): Promise<OutboxPage> {
  return await listOutbox(ctx.db, query, ctx.storage.dialect)
}

/** Re-queues one failed message and starts its delivery. Returns the row as it now stands. */
export async function retryMail(ctx: AuthContext, id: string): Promise<OutboxRow> {
  const found = await findOutboxMessage(ctx.db, id)
  if (!found) throw new APIError(404, 'MAIL_NOT_FOUND', 'Mail not found')
  if (found.status !== 'failed') return found
  await requeueFailed(ctx.db, ctx.clock, [id])
  // Read before waking the mailer: the answer is the row as re-queued, not whatever stage of
  // delivery the mailer has reached by the time a second read returns (on PostgreSQL it often
  // claimed the message first).
  const requeued = (await findOutboxMessage(ctx.db, id)) ?? found
  ctx.mailer.wake?.()
  return requeued
}

/** Re-queues every failed message; returns how many. */
export async function retryAllFailedMail(ctx: AuthContext): Promise<number> {
  const n = await requeueFailed(ctx.db, ctx.clock)
  if (n > 0) ctx.mailer.wake?.()
  return n
}

/** Resolves when the mailer has finished what it can deliver now. */
export async function waitForMailDelivery(ctx: AuthContext): Promise<void> {
  await ctx.mailer.whenIdle?.()
}

const address = z.email()

/**
 * Sends a test message through the outbox and waits for the delivery attempt, so the panel can
 * show at once whether SMTP works. Returns the outbox row (sent, failed with the error, or queued
 * when no SMTP server is configured).
 */
export async function sendTestEmail(ctx: AuthContext, to: string): Promise<OutboxRow> {
  if (!address.safeParse(to).success) throw new APIError(400, 'INVALID_EMAIL', 'Invalid email')
  const mail = applyMailTemplate(testEmail(ctx.config().mail.appName, to.trim().toLowerCase()), ctx.config().mail.templates)
  const row = await queueMail(ctx.db, ctx.clock, mail)
  ctx.mailer.wake?.()
  await ctx.mailer.whenIdle?.()
  return settledOutboxMessage(ctx, row)
}

/** How long the test mail waits for another instance that claimed it (PostgreSQL, several instances). */
const CLAIMED_ELSEWHERE_WAIT_MS = 10_000

/**
 * The message once its delivery attempt is over. With several instances on one database another
 * one may have claimed it (`sending`) while this one's loop went idle: that attempt is awaited too,
 * for a bounded time, so the answer says how the delivery went rather than that it is under way.
 */
async function settledOutboxMessage(ctx: AuthContext, row: OutboxRow): Promise<OutboxRow> {
  const deadline = Date.now() + CLAIMED_ELSEWHERE_WAIT_MS
  for (;;) {
    const current = (await findOutboxMessage(ctx.db, row.id)) ?? row
    if (current.status !== 'sending' || Date.now() >= deadline) return current
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
