/** What the domain asks of mail delivery. Implementations queue in the outbox and deliver in the background. */
export type MailKind =
  | 'verification'
  | 'password-reset'
  | 'change-email'
  | 'delete-account'
  | (string & {}) // kinds a feature folder brings (organization: 'invitation')
  | 'test'
  | 'account-exists'
  | 'email-changed-notice'
  | 'password-changed-notice'
  | 'two-factor-otp'
  | 'security-notice'

export interface OutgoingMail {
  to: string
  subject: string
  kind: MailKind
  text: string
  html: string
  /** What it was rendered from (renderMail): an edited template of its kind re-renders it (custom-templates.ts). */
  layout?: MailLayout
}

/** The parts a message is rendered from: kept on the OutgoingMail so an edited template can re-render it. */
export interface MailLayout {
  to: string
  kind: MailKind
  subject: string
  appName: string
  greeting: string
  lines: string[]
  action?: { label: string; url: string }
  footer: string
  /**
   * The recipient's account center (`{baseURL}/ui/account`), shown under the footer as "Manage your
   * account: …". Not set by the message's author: the outbox sets it (accountLinkOf) when hosted
   * pages are on and the address belongs to an account, so every message of the shared layout
   * carries it, an edited template included.
   */
  account?: string
}

export interface Mailer {
  /**
   * Records the message and schedules its delivery; returns at once and never waits for the SMTP
   * conversation, so response times do not reveal whether a message was sent. Resolves once the
   * message is recorded (await it: a failed insert then reaches the caller).
   */
  send(mail: OutgoingMail): void | Promise<void>
  /** Whether an SMTP server is configured now (--smtp-url or mail.smtp). */
  isConfigured?(): boolean
  /**
   * Says once, at start-up, that no SMTP server is configured and every message is kept in the
   * panel's Outbox (development mail); `panelURL` is where to read them. Nothing when SMTP is set.
   */
  announceDevelopmentMail?(panelURL: string | null): void
  /** The --smtp-url / GATEHOUSE_SMTP_URL the server started with, its password left out; null without one. */
  startupSmtpUrl?(): string | null
  /** Starts delivering whatever the outbox holds as queued (after a retry or an SMTP change). */
  wake?(): void
  /** Resolves when no delivery is in progress and nothing deliverable is queued. */
  whenIdle?(): Promise<void>
  /** Finishes the delivery in progress (bounded) and releases the SMTP connections. */
  close?(): Promise<void>
}

/** A mailer that only logs; for tools that build a context without an outbox. */
export function createLogMailer(log: (line: string) => void): Mailer {
  return {
    send(mail) {
      log(`mail (${mail.kind}) to ${mail.to}: ${mail.subject}`)
    },
  }
}
