import type { RenderedMail } from '../../feature.js'
import { applyMailTemplate, MAIL_PLACEHOLDERS, type MailTemplate, templateProblem } from '../../mail/custom-templates.js'
import { listMailOutbox, readOutboxMessage, retryMail, sendTestEmail, smtpSettings } from '../../mail/index.js'
import { type OutboxRow, sealSmtpPassword } from '../../mail/outbox.js'
import { testEmail } from '../../mail/templates.js'
import { lastConfigChange } from '../../core/config-audit.js'
import { refuseStale } from '../../core/object-revisions.js'
import { PanelError } from '../../panel-frame/errors.js'
import { featuresOf } from '../../features-of.js'
import type { HandlerGroup, PanelEnv } from '../../panel-frame/env.js'
import type { mailContract } from './panel-contract.js'
import { mailErrors } from './errors.js'
import { hostedPageURL } from '../../http/hosted-page-url.js'

type EmailOps =
  | 'email.get'
  | 'email.update'
  | 'email.sendTest'
  | 'email.preview'
  | 'email.outbox'
  | 'email.retry'
  | 'email.message'
  | 'email.templates'
  | 'email.saveTemplate'
  | 'email.resetTemplate'

/** The editor's text of a built-in message: its greeting and lines as placeholders, the app's name as {{appName}}. */
const BUILT_IN_BODY = '{{greeting}}\n\n{{message}}'

const sampleUser = { name: 'Ada Lovelace', email: 'ada@example.com' }

const toMailView = (m: OutboxRow) => ({
  id: m.id,
  to: m.to,
  subject: m.subject,
  kind: m.kind,
  status: m.status,
  error: m.error,
  attempts: m.attempts,
  createdAt: m.createdAt.getTime(),
  updatedAt: m.updatedAt.getTime(),
  sentAt: m.sentAt ? m.sentAt.getTime() : null,
})

/** The server the panel drives: its context and live config store. */
type Gatehouse = PanelEnv['gatehouse']

/** Every message kind with its sample rendering: each feature renders its own mail (Feature.mailPreviews); the test message is the mail view's. */
function mailPreviews({ ctx, config: store }: Gatehouse): Record<string, () => RenderedMail> {
  const app = store.get().mail.appName
  const link = (path: string) => `${ctx.baseURL}${path}`
  const sample = { appName: app, user: sampleUser, link, now: ctx.clock.now() }
  return {
    ...Object.assign({}, ...featuresOf(ctx).map((feature) => feature.mailPreviews?.(sample) ?? {})),
    test: () => testEmail(app, sampleUser.email),
  }
}

/** The built-in rendering of a kind with sample data; a kind nobody sends is refused. */
function builtInMail(gatehouse: Gatehouse, kind: string): RenderedMail {
  const render = Object.hasOwn(mailPreviews(gatehouse), kind) ? mailPreviews(gatehouse)[kind] : undefined
  if (!render) throw new PanelError(404, mailErrors.TEMPLATE_NOT_FOUND.code, `${mailErrors.TEMPLATE_NOT_FOUND.message}: ${kind}`)
  return render()
}

/** A message kind's subject and body as the editor shows them: the edited ones, else the built-in message's. */
function shownTemplate(gatehouse: Gatehouse, kind: string, rendered = builtInMail(gatehouse, kind)): MailTemplate {
  const custom = gatehouse.config.get().mail.templates[kind]
  return {
    subject: custom?.subject ?? rendered.subject.split(gatehouse.config.get().mail.appName).join('{{appName}}'),
    body: custom?.body ?? BUILT_IN_BODY,
  }
}

/**
 * Refuses a template save over another admin's change (issue 50 §1): `base` holds each field the
 * editor changed (subject, body) as it showed it; one shown differently now is refused (409
 * CONFLICT) naming who changed it and when, from the configuration's audit trail.
 */
async function refuseStaleTemplate(
  gatehouse: Gatehouse,
  kind: string,
  shown: MailTemplate,
  patch: Record<string, unknown>,
  base?: Record<string, unknown>,
) {
  const who = (field: string) => lastConfigChange(gatehouse.ctx, `mail.templates.${kind}.${field}`)
  await refuseStale(gatehouse.ctx, who, { ...shown }, patch, base)
}

/** A template's problem, named beside its field (subject or body). */
function refuseInvalidTemplate(template: MailTemplate, hasLink: boolean): void {
  const problem = templateProblem(template, hasLink)
  if (problem)
    throw new PanelError(400, mailErrors.INVALID_TEMPLATE.code, problem.message, [{ path: problem.field, message: problem.message }])
}

/** What start-up options set (the --smtp-url flag; mail.smtp keys and mail.from from --config or the environment), which the panel cannot change. */
function startupMailSettings({ ctx, config: store }: Gatehouse) {
  // The one list of keys start-up options set (config/startup.ts), narrowed to what this view edits.
  const keys = store
    .startupKeys()
    .map((k) => k.path)
    .filter((p) => p === 'mail.from' || /^mail\.smtp\.(url|host|port|secure|user|password)$/.test(p))
  return { smtpUrl: ctx.mailer.startupSmtpUrl?.() ?? null, keys }
}

/** The SMTP settings: read, saved (unless a start-up option fixes them), tried with a test message. */
const smtpHandlers: HandlerGroup<typeof mailContract, 'email.get' | 'email.update' | 'email.sendTest'> = (env) => {
  const { ctx, config: store } = env.gatehouse
  return {
    'email.get'() {
      const { mail } = store.get()
      return {
        smtp: {
          host: mail.smtp.host ?? '',
          port: mail.smtp.port ?? 587,
          secure: mail.smtp.secure ?? false,
          user: mail.smtp.user ?? '',
          hasPassword: Boolean(mail.smtp.password),
          from: mail.from,
        },
        // The mailer knows the --smtp-url flag too, which the config does not hold.
        configured: ctx.mailer.isConfigured?.() ?? smtpSettings(store.get()) !== null,
        templates: Object.keys(mailPreviews(env.gatehouse)),
        startup: startupMailSettings(env.gatehouse),
      }
    },

    'email.update'(input) {
      const fixed = startupMailSettings(env.gatehouse)
      // Saved, it would not take effect: a start-up option wins over the stored settings.
      if (fixed.smtpUrl || fixed.keys.length > 0)
        throw new PanelError(409, mailErrors.SET_AT_STARTUP.code, mailErrors.SET_AT_STARTUP.message, [
          { path: fixed.smtpUrl ? 'host' : (fixed.keys[0] ?? 'host').replace(/^mail\.(smtp\.)?/, ''), message: 'set at start-up' },
        ])
      store.update({
        mail: {
          from: input.from,
          smtp: {
            // Host settings saved here are the ones used: a stored SMTP URL would win over them.
            url: null,
            host: input.host || undefined,
            port: input.port || undefined,
            secure: input.secure,
            user: input.user || undefined,
            // Sealed at rest (AES-256-GCM, key derived from the auth secret); the mailer opens it.
            ...(input.password ? { password: sealSmtpPassword(ctx.secret, input.password) } : {}),
          },
        },
      })
      return { success: true }
    },

    async 'email.sendTest'({ to }) {
      const row = await sendTestEmail(ctx, to)
      if (row.status === 'failed') throw new PanelError(502, 'SMTP_FAILED', row.error ?? 'Delivery failed')
      return { id: row.id, status: row.status }
    },
  }
}

/** The message templates: previewed, listed with their placeholders, edited and reset to the built-in text. */
const templateHandlers: HandlerGroup<
  typeof mailContract,
  'email.preview' | 'email.templates' | 'email.saveTemplate' | 'email.resetTemplate'
> = (env) => {
  const { ctx, config: store } = env.gatehouse
  return {
    'email.preview'({ kind, draft }) {
      const rendered = builtInMail(env.gatehouse, kind)
      const template = draft ?? store.get().mail.templates[kind]
      if (draft) refuseInvalidTemplate(draft, Boolean(rendered.layout?.action))
      // As an account holder receives it: with the account center's line when hosted pages are on.
      const account = store.get().hostedPages.enabled ? hostedPageURL(ctx, 'account') : null
      const { subject, text, html } = applyMailTemplate(
        { to: sampleUser.email, kind, ...rendered },
        template ? { [kind]: template } : undefined,
        account,
      )
      return { subject, text, html }
    },

    'email.templates'() {
      const stored = store.get().mail.templates
      return Object.entries(mailPreviews(env.gatehouse)).map(([kind, render]) => {
        const rendered = render()
        const hasLink = Boolean(rendered.layout?.action)
        return {
          kind,
          ...shownTemplate(env.gatehouse, kind, rendered),
          custom: Boolean(stored[kind]),
          placeholders: Object.entries(MAIL_PLACEHOLDERS)
            .filter(([name]) => hasLink || name !== 'url')
            .map(([name, description]) => ({ name, description })),
        }
      })
    },

    async 'email.saveTemplate'({ kind, subject, body, base }) {
      const rendered = builtInMail(env.gatehouse, kind)
      const shown = shownTemplate(env.gatehouse, kind, rendered)
      await refuseStaleTemplate(env.gatehouse, kind, shown, { subject, body }, base)
      // A field not sent keeps what the editor shows now (another admin's edit of it included).
      const template = { subject: (subject ?? shown.subject).trim(), body: (body ?? shown.body).trim() }
      refuseInvalidTemplate(template, Boolean(rendered.layout?.action))
      store.update({ mail: { templates: { [kind]: template } } })
      await store.flushed()
      return { success: true }
    },

    async 'email.resetTemplate'({ kind, base }) {
      const shown = shownTemplate(env.gatehouse, kind)
      // A reset puts back both fields: each checked against what the editor showed.
      await refuseStaleTemplate(env.gatehouse, kind, shown, { subject: null, body: null }, base)
      store.update({ mail: { templates: { [kind]: null } } })
      await store.flushed()
      return { success: true }
    },
  }
}

/** The outbox: its page of messages, one message's text and links, a retry. */
const outboxHandlers: HandlerGroup<typeof mailContract, 'email.outbox' | 'email.message' | 'email.retry'> = (env) => {
  const { ctx } = env.gatehouse
  return {
    async 'email.outbox'(input) {
      const page = await listMailOutbox(ctx, input)
      return { total: page.total, messages: page.messages.map(toMailView) }
    },

    async 'email.message'({ id }) {
      const message = await readOutboxMessage(ctx, id)
      return { ...toMailView(message), text: message.text, links: message.links }
    },

    async 'email.retry'({ id }) {
      await retryMail(ctx, id)
      return { success: true }
    },
  }
}

/** The Email view's handlers: SMTP settings, template previews, the outbox and its retries. */
export const mailPanel: HandlerGroup<typeof mailContract, EmailOps> = (env) => ({
  ...smtpHandlers(env),
  ...templateHandlers(env),
  ...outboxHandlers(env),
})
