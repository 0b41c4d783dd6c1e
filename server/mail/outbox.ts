import { and, count, desc, eq, inArray, lt, type SQL, sql } from 'drizzle-orm'
import { urlPassword } from '../config/url-password.js'
import type { createTransport } from 'nodemailer'
import type { Clock } from '../core/context.js'
import type { GatehouseConfig } from '../config/schema.js'
import { applyMailTemplate } from './custom-templates.js'
import { encryptSecret, revealSecret } from '../crypto/encrypt.js'
import { generateId } from '../crypto/random.js'
import type { DB } from '../db/index.js'
import { mailOutbox } from '../db/schema.js'
import type { Mailer, OutgoingMail } from './types.js'
import { firstRow, type Storage } from '../db/storage.js'

/**
 * The mail outbox: every message is first a row (queued), then an SMTP delivery in the background
 * (sent, or failed with the error). A failed message stays in the table and can be retried; a
 * queued one survives a restart and is delivered when the server (or SMTP) comes back.
 */

export type OutboxRow = typeof mailOutbox.$inferSelect
export type OutboxStatus = OutboxRow['status']

export interface MailLogger {
  info(message: string): void
  warn(message: string): void
}

export interface OutboxMailerOptions {
  db: DB
  /** The engine behind `db` ('sqlite' by default): PostgreSQL claims with FOR UPDATE SKIP LOCKED. */
  dialect?: Storage['dialect']
  clock: Clock
  config: () => GatehouseConfig
  /** --smtp-url / GATEHOUSE_SMTP_URL: wins over the config's mail.smtp. */
  smtpUrl?: string
  logger: MailLogger
  /** The auth secret: opens an SMTP password the control panel stored sealed. */
  secret?: string
  /** Told of each delivery attempt's result (the metrics' `ctx.events.mailDelivery`). */
  delivered?: (sent: boolean) => void
  /**
   * The account center to link under a message's footer (MailLayout.account) for this address:
   * `{baseURL}/ui/account` when hosted pages are on and the address belongs to an account, else
   * null (a sign-up magic link, an invitation to an address with no account).
   */
  accountLink?: (to: string) => Promise<string | null>
}

/** SMTP connection settings, from the flag or the config; null when none is configured. */
export interface SmtpSettings {
  url?: string
  host?: string
  port?: number
  secure?: boolean
  auth?: { user: string; pass: string }
}

/** The purpose bound into a sealed SMTP password (server/crypto/encrypt.ts). */
const SMTP_PASSWORD_PURPOSE = 'smtp-password'

/** Seals an SMTP password for config.json (AES-256-GCM, key derived from the auth secret); smtpSettings opens it. */
export const sealSmtpPassword = (secret: string, plaintext: string): string => encryptSecret(secret, plaintext, SMTP_PASSWORD_PURPOSE)

/**
 * SMTP connection settings, from the flag or the config; null when none is configured. The
 * password may be stored sealed (the control panel seals it); `secret` opens it.
 */
export function smtpSettings(config: GatehouseConfig, smtpUrl?: string, secret?: string): SmtpSettings | null {
  const url = smtpUrl || config.mail.smtp.url
  if (url) return { url }
  const { host, port, secure, user, password } = config.mail.smtp
  if (!host) return null
  const pass = secret ? revealSecret(secret, password, SMTP_PASSWORD_PURPOSE) : password
  return {
    host,
    port: port ?? (secure ? 465 : 587),
    secure: secure ?? port === 465,
    ...(user ? { auth: { user, pass: pass ?? '' } } : {}),
  }
}

/** Where a message goes in the logs: the SMTP password never appears. */
export function describeSmtp(settings: SmtpSettings): string {
  if (settings.url) {
    try {
      const u = new URL(settings.url)
      return `${u.protocol}//${u.host}`
    } catch {
      return 'smtp (invalid url)'
    }
  }
  return `smtp://${settings.host}:${settings.port}`
}

/**
 * The one line that says mail is not sent (said once: at start-up by `gatehouse serve`, else at
 * the first message): where the messages are and how to have them sent.
 */
export function developmentMailNotice(panelURL: string | null): string {
  const where = panelURL ? `the control panel's Email → Outbox (${panelURL})` : "the control panel's Email → Outbox"
  return `no SMTP server configured (--smtp-url or mail.smtp): development mail, nothing is sent; every message is kept in ${where}, where its links can be opened`
}

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

type Transport = ReturnType<typeof createTransport>

const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 }

/** A message `sending` for longer than this was abandoned (its process stopped): longer than any delivery's timeouts. */
const STALE_SENDING_MS = 10 * 60_000

export class OutboxMailer implements Mailer {
  private transport: { key: string; value: Transport } | null = null
  private running = false
  private again = false
  private closed = false
  private idleWaiters: Array<() => void> = []
  private warnedNoSmtp = false
  private revived = false

  constructor(private readonly options: OutboxMailerOptions) {}

  async send(mail: OutgoingMail): Promise<void> {
    // A template edited in the panel re-renders the message of its kind; the account center's
    // link goes under the footer of every message of the shared layout (custom-templates.ts).
    const account = mail.layout ? await this.options.accountLink?.(mail.to) : null
    const row = await queueMail(this.options.db, this.options.clock, applyMailTemplate(mail, this.options.config().mail.templates, account))
    const settings = this.settings()
    if (!settings) {
      this.options.logger.info(`mail (${row.kind}) to ${row.to} kept in the outbox as ${row.id}`)
      if (!this.warnedNoSmtp) {
        this.warnedNoSmtp = true
        this.options.logger.warn(developmentMailNotice(null))
      }
      return
    }
    this.wake()
  }

  isConfigured(): boolean {
    return this.settings() !== null
  }

  announceDevelopmentMail(panelURL: string | null): void {
    if (this.warnedNoSmtp || this.settings()) return
    this.warnedNoSmtp = true
    this.options.logger.info(developmentMailNotice(panelURL))
  }

  startupSmtpUrl(): string | null {
    const url = this.options.smtpUrl
    return url ? (urlPassword(url)?.withoutPassword ?? url) : null
  }

  wake(): void {
    if (this.closed) return
    if (this.running) {
      this.again = true
      return
    }
    this.running = true
    // Never in the caller's turn: the answer leaves before any SMTP work starts.
    setImmediate(
      () =>
        void this.drain().catch((error: unknown) => {
          // The database was busy or closed (shutdown): what is queued goes out at the next wake.
          this.options.logger.warn(`mail delivery paused: ${error instanceof Error ? error.message : String(error)}`)
        }),
    )
  }

  whenIdle(): Promise<void> {
    if (!this.running) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  async close(): Promise<void> {
    this.closed = true
    await Promise.race([this.whenIdle(), new Promise((resolve) => setTimeout(resolve, 5000).unref())])
    this.transport?.value.close()
    this.transport = null
  }

  private settings(): SmtpSettings | null {
    return smtpSettings(this.options.config(), this.options.smtpUrl, this.options.secret)
  }

  /** The transport for the current settings; rebuilt when the config changes them. */
  private async transportFor(settings: SmtpSettings): Promise<Transport> {
    const key = JSON.stringify(settings)
    if (this.transport?.key !== key) {
      // Loaded at the first delivery: a server that sends no mail never loads nodemailer.
      const { createTransport } = await import('nodemailer')
      this.transport?.value.close()
      this.transport = { key, value: createTransport({ ...settings, ...TIMEOUTS }) }
    }
    return this.transport.value
  }

  private async nextQueued(after: Set<string>): Promise<OutboxRow | undefined> {
    const rows = await this.options.db
      .select()
      .from(mailOutbox)
      .where(eq(mailOutbox.status, 'queued'))
      .orderBy(mailOutbox.createdAt, sql`rowid`)
      .limit(after.size + 1)
    return rows.find((r) => !after.has(r.id))
  }

  /**
   * The next queued message, claimed (queued → sending) before it is sent: of several processes
   * on one database (the server and the CLI, or several instances on PostgreSQL) only one sends it.
   * PostgreSQL: one statement whose subquery locks the oldest queued row and skips rows another
   * instance has locked (FOR UPDATE SKIP LOCKED), so instances never wait on each other. SQLite:
   * a conditional update (queued → sending) of the oldest queued row, retried when another
   * process won it.
   */
  private async claimNext(after: Set<string>): Promise<OutboxRow | undefined> {
    const { db, clock } = this.options
    if (this.options.dialect === 'postgres') {
      const oldest = sql`(select ${mailOutbox.id} from ${mailOutbox} where ${mailOutbox.status} = 'queued' order by ${mailOutbox.createdAt}, ${mailOutbox.id} limit 1 for update skip locked)`
      const [claimed] = await db
        .update(mailOutbox)
        .set({ status: 'sending', updatedAt: new Date(clock.now()) })
        .where(and(eq(mailOutbox.id, oldest), eq(mailOutbox.status, 'queued')))
        .returning()
      return claimed
    }
    for (;;) {
      const candidate = await this.nextQueued(after)
      if (!candidate) return undefined
      const claimed = await db
        .update(mailOutbox)
        .set({ status: 'sending', updatedAt: new Date(clock.now()) })
        .where(and(eq(mailOutbox.id, candidate.id), eq(mailOutbox.status, 'queued')))
        .returning({ id: mailOutbox.id })
      if (claimed.length === 1) return candidate
      // Another process claimed it first.
      after.add(candidate.id)
    }
  }

  /** Messages left `sending` by a process that stopped mid-delivery go back to the queue. */
  private async reviveStale(): Promise<void> {
    // Once per process, when there is somewhere to deliver to; a busy database is tried again at the next wake.
    if (this.revived || !this.settings()) return
    const { db, clock } = this.options
    const before = new Date(clock.now() - STALE_SENDING_MS)
    try {
      await db
        .update(mailOutbox)
        .set({ status: 'queued', updatedAt: new Date(clock.now()) })
        .where(and(eq(mailOutbox.status, 'sending'), lt(mailOutbox.updatedAt, before)))
      this.revived = true
    } catch {
      // Busy or closed: next time.
    }
  }

  private async drain(): Promise<void> {
    try {
      await this.reviveStale()
      do {
        this.again = false
        const attempted = new Set<string>()
        for (;;) {
          if (this.closed && attempted.size > 0) break
          const settings = this.settings()
          if (!settings) break
          const row = await this.claimNext(attempted)
          if (!row) break
          attempted.add(row.id)
          await this.deliver(row, settings)
        }
      } while (this.again && !this.closed)
    } finally {
      this.running = false
      for (const resolve of this.idleWaiters.splice(0)) resolve()
    }
  }

  private async deliver(row: OutboxRow, settings: SmtpSettings): Promise<void> {
    const { db, clock, config, logger } = this.options
    let error: string | null = null
    try {
      await (await this.transportFor(settings)).sendMail({
        from: config().mail.from,
        to: row.to,
        subject: row.subject,
        text: row.text,
        html: row.html,
      })
    } catch (e) {
      error = e instanceof Error ? e.message : String(e)
      // A broken connection must not poison the next attempt.
      this.transport?.value.close()
      this.transport = null
    }
    const now = new Date(clock.now())
    try {
      await db
        .update(mailOutbox)
        .set({
          status: error ? 'failed' : 'sent',
          error,
          attempts: row.attempts + 1,
          updatedAt: now,
          sentAt: error ? null : now,
        })
        .where(eq(mailOutbox.id, row.id))
    } catch {
      // The database closed under a delivery at shutdown: the row stays `sending` and is queued
      // again (reviveStale) by a later start.
      return
    }
    this.options.delivered?.(!error)
    if (error) logger.warn(`mail ${row.id} (${row.kind}) to ${row.to} failed via ${describeSmtp(settings)}: ${error}`)
    else logger.info(`mail ${row.id} (${row.kind}) to ${row.to} sent via ${describeSmtp(settings)}`)
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
