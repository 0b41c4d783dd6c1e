import { urlPassword } from '../config/url-password.js'
import type { createTransport } from 'nodemailer'
import type { Clock } from '../core/context.js'
import type { GatehouseConfig } from '../config/schema.js'
import { applyMailTemplate } from './custom-templates.js'
import { encryptSecret, revealSecret } from '../crypto/encrypt.js'
import type { DB } from '../db/index.js'
import type { Mailer, OutgoingMail } from './types.js'
import type { Storage } from '../db/storage.js'
import { Outbox } from '../core/outbox.js'
import { mailStore, type OutboxRow, queueMail } from './store.js'

/**
 * The mail outbox: every message is first a row (queued), then an SMTP delivery in the background
 * (sent, or failed with the error). A failed message stays in the table and can be retried; a
 * queued one survives a restart and is delivered when the server (or SMTP) comes back. Delivery
 * is the outbox engine's (core/outbox.ts), the SQL mail/store.ts's.
 */

export interface MailLogger {
  info(message: string): void
  warn(message: string): void
}

export interface OutboxMailerOptions {
  db: DB
  /** The engine behind `db` ('sqlite' by default). */
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

type Transport = ReturnType<typeof createTransport>

const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 }

/** A message's delivery time limit (the engine cuts it off): longer than nodemailer's own timeouts together. */
const DELIVERY_TIMEOUT_MS = 5 * 60_000
/** A message `sending` for longer than this was abandoned (its process stopped): due again, for any instance. */
const LEASE_MS = 10 * 60_000
/** How long close() lets the message in flight finish. */
const CLOSE_GRACE_MS = 5_000

export class OutboxMailer implements Mailer {
  private transport: { key: string; value: Transport } | null = null
  private warnedNoSmtp = false
  /** The outbox engine's queue of mail: one destination (the SMTP server), no automatic retry, no max age. */
  private readonly outbox: Outbox<OutboxRow, SmtpSettings>

  constructor(private readonly options: OutboxMailerOptions) {
    const { logger } = options
    this.outbox = new Outbox<OutboxRow, SmtpSettings>(
      {
        store: mailStore(options.db, options.dialect ?? 'sqlite', LEASE_MS),
        leaseMs: LEASE_MS,
        timeoutMs: DELIVERY_TIMEOUT_MS,
        // One SMTP conversation at a time.
        batch: 1,
        backoff: null,
        paused: () => this.settings() === null,
        target: async () => this.settings(),
        deliver: (row, settings, signal) => this.deliver(row, settings, signal),
        settled: (row, settings, error) => {
          this.options.delivered?.(error === null)
          if (error !== null) logger.warn(`mail ${row.id} (${row.kind}) to ${row.to} failed via ${describeSmtp(settings)}: ${error}`)
          else logger.info(`mail ${row.id} (${row.kind}) to ${row.to} sent via ${describeSmtp(settings)}`)
        },
        // The database was busy or closed (shutdown): what is queued goes out at the next wake.
        runFailed: (error) => logger.warn(`mail delivery paused: ${error instanceof Error ? error.message : String(error)}`),
      },
      { clock: options.clock },
    )
  }

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

  /** Never in the caller's turn: the answer leaves before any SMTP work starts. */
  wake(): void {
    this.outbox.wake()
  }

  whenIdle(): Promise<void> {
    return this.outbox.whenIdle()
  }

  async close(): Promise<void> {
    await this.outbox.stop(CLOSE_GRACE_MS)
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

  /** A broken (or cut off) connection must not poison the next attempt. */
  private dropTransport(transport: Transport): void {
    if (this.transport?.value !== transport) return
    transport.close()
    this.transport = null
  }

  private async deliver(row: OutboxRow, settings: SmtpSettings, signal: AbortSignal): Promise<void> {
    const transport = await this.transportFor(settings)
    const cut = (): void => this.dropTransport(transport)
    signal.addEventListener('abort', cut, { once: true })
    try {
      await transport.sendMail({
        from: this.options.config().mail.from,
        to: row.to,
        subject: row.subject,
        text: row.text,
        html: row.html,
      })
    } catch (error) {
      this.dropTransport(transport)
      throw error
    } finally {
      signal.removeEventListener('abort', cut)
    }
  }
}

export {
  findOutboxMessage,
  listOutbox,
  type OutboxPage,
  type OutboxQuery,
  type OutboxRow,
  type OutboxStatus,
  queueMail,
  requeueFailed,
} from './store.js'
