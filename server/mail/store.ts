import { and, count, desc, eq, inArray, lte, or, type SQL, sql } from 'drizzle-orm'
import type { Clock } from '../core/context.js'
import type { OutboxStore } from '../core/outbox.js'
import { generateId } from '../crypto/random.js'
import type { DB } from '../db/index.js'
import { mailOutbox } from '../db/schema.js'
import { firstRow, type Storage } from '../db/storage.js'
import type { OutgoingMail } from './types.js'

/**
 * The mail outbox's SQL: every message is a row (queued, sending while leased to an instance,
 * sent, or failed with the error). The delivery rules are the outbox engine's (core/outbox.ts);
 * here a claim is `queued → sending` (or a `sending` row whose lease lapsed), `updatedAt` the
 * time of the claim.
 */

export type OutboxRow = typeof mailOutbox.$inferSelect
export type OutboxStatus = OutboxRow['status']

/** Inserts one message into the outbox as queued and returns its row. */
export async function queueMail(db: DB, clock: Clock, mail: OutgoingMail): Promise<OutboxRow> {
  const now = new Date(clock.now())
  const row: OutboxRow = {
    id: generateId(),
    to: mail.to,
    subject: mail.subject,
    kind: mail.kind,
    text: mail.text,
    html: mail.html,
    status: 'queued',
    error: null,
    attempts: 0,
    createdAt: now,
    updatedAt: now,
    sentAt: null,
  }
  await db.insert(mailOutbox).values(row)
  return row
}

/** Queued, or sending under a claim made before `leasedBefore` (its instance stopped mid-delivery). */
const claimableMail = (leasedBefore: Date) =>
  or(eq(mailOutbox.status, 'queued'), and(eq(mailOutbox.status, 'sending'), lte(mailOutbox.updatedAt, leasedBefore)))

/** Every message goes through the one SMTP server: one destination, one lane. */
export const SMTP_DESTINATION = 'smtp'

/** The outbox engine's store over `mailOutbox` (leases of `leaseMs`). */
export function mailStore(db: DB, dialect: Storage['dialect'], leaseMs: number): OutboxStore<OutboxRow> {
  return {
    async dueDestinations(now) {
      const due = await firstRow(
        db
          .select({ id: mailOutbox.id })
          .from(mailOutbox)
          .where(claimableMail(new Date(now.getTime() - leaseMs)))
          .limit(1),
      )
      return due ? [SMTP_DESTINATION] : []
    },
    async claim(_destination, { now, leaseMs: lease, limit }) {
      const claimable = claimableMail(new Date(now.getTime() - lease))
      // Oldest first; SQLite's rowid keeps insertion order within one millisecond, PostgreSQL the id.
      const due = db
        .select({ id: mailOutbox.id })
        .from(mailOutbox)
        .where(claimable)
        .orderBy(mailOutbox.createdAt, dialect === 'sqlite' ? sql`rowid` : mailOutbox.id)
        .limit(limit)
      return await db
        .update(mailOutbox)
        .set({ status: 'sending', updatedAt: now, attempts: sql`${mailOutbox.attempts} + 1` })
        .where(and(inArray(mailOutbox.id, due), claimable))
        .returning()
    },
    async sent(row, at) {
      await db.update(mailOutbox).set({ status: 'sent', error: null, updatedAt: at, sentAt: at }).where(eq(mailOutbox.id, row.id))
    },
    async failed(row, { at, error }) {
      // Mail has no retry time: a failure is final until an operator retries (requeueFailed).
      await db.update(mailOutbox).set({ status: 'failed', error, updatedAt: at, sentAt: null }).where(eq(mailOutbox.id, row.id))
    },
    async drop(row) {
      await db.delete(mailOutbox).where(eq(mailOutbox.id, row.id))
    },
  }
}

export interface OutboxQuery {
  status?: OutboxStatus
  kind?: string
  to?: string
  limit?: number
  offset?: number
}

export interface OutboxPage {
  messages: OutboxRow[]
  total: number
  limit: number
  offset: number
}

/** The outbox, newest first, for the control panel. */
export async function listOutbox(db: DB, query: OutboxQuery = {}, dialect: Storage['dialect'] = 'sqlite'): Promise<OutboxPage> {
  const limit = Math.min(Math.max(query.limit ?? 100, 1), 1000)
  const offset = Math.max(query.offset ?? 0, 0)
  const filters: SQL[] = []
  if (query.status) filters.push(eq(mailOutbox.status, query.status))
  if (query.kind) filters.push(eq(mailOutbox.kind, query.kind))
  if (query.to) filters.push(eq(mailOutbox.to, query.to.toLowerCase()))
  const where = filters.length > 0 ? and(...filters) : undefined
  const messages = await db
    .select()
    .from(mailOutbox)
    .where(where)
    // Newest first; SQLite's rowid keeps insertion order within one millisecond, PostgreSQL the id.
    .orderBy(desc(mailOutbox.createdAt), dialect === 'sqlite' ? desc(sql`rowid`) : desc(mailOutbox.id))
    .limit(limit)
    .offset(offset)
  const total = (await firstRow(db.select({ n: count() }).from(mailOutbox).where(where)))?.n ?? 0
  return { messages, total, limit, offset }
}

export async function findOutboxMessage(db: DB, id: string): Promise<OutboxRow | undefined> {
  return await firstRow(db.select().from(mailOutbox).where(eq(mailOutbox.id, id)))
}

/**
 * Puts failed messages back in the queue (one by id, or every failed one) and starts delivery.
 * Returns how many were re-queued; a message that is not failed is left alone.
 */
export async function requeueFailed(db: DB, clock: Clock, ids?: string[]): Promise<number> {
  const failed = eq(mailOutbox.status, 'failed')
  const result = await db
    .update(mailOutbox)
    .set({ status: 'queued', updatedAt: new Date(clock.now()) })
    .where(ids ? and(failed, inArray(mailOutbox.id, ids)) : failed)
    // Counted from the returned rows: better-sqlite3 reports `changes`, node-postgres `rowCount`.
    .returning({ id: mailOutbox.id })
  return result.length
}
