import { listMailOutbox, retryMail, sendTestEmail, smtpSettings } from '../../mail/index.js'
import { sealSmtpPassword } from '../../mail/outbox.js'
import { testEmail } from '../../mail/templates.js'
import { PanelError } from '../../panel/errors.js'
import type { HandlerGroup } from '../../panel/env.js'
import { featuresOf } from '../../features-of.js'

type EmailOps = 'email.get' | 'email.update' | 'email.sendTest' | 'email.preview' | 'email.outbox' | 'email.retry'

const sampleUser = { name: 'Ada Lovelace', email: 'ada@example.com' }

/** The Email view's handlers: SMTP settings, template previews, the outbox and its retries. */
export const mailPanel: HandlerGroup<EmailOps> = (env) => {
  const { ctx, config: store } = env.gatehouse

  const previews = (): Record<string, () => { subject: string; text: string; html: string }> => {
    const app = store.get().mail.appName
    const link = (path: string) => `${ctx.baseURL}${path}`
    // Each feature renders its own mail (Feature.mailPreviews); the test message is the mail view's.
    const sample = { appName: app, user: sampleUser, link, now: ctx.clock.now() }
    return {
      ...Object.assign({}, ...featuresOf(ctx).map((feature) => feature.mailPreviews?.(sample) ?? {})),
      test: () => testEmail(app, sampleUser.email),
    }
  }

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
        templates: Object.keys(previews()),
      }
    },

    'email.update'(input) {
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

    'email.preview'({ kind }) {
      const render = previews()[kind]
      if (!render) throw new PanelError(404, 'TEMPLATE_NOT_FOUND', `No template ${kind}`)
      const { subject, text, html } = render()
      return { subject, text, html }
    },

    async 'email.outbox'(input) {
      const page = await listMailOutbox(ctx, input)
      return {
        total: page.total,
        messages: page.messages.map((m) => ({
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
        })),
      }
    },

    async 'email.retry'({ id }) {
      await retryMail(ctx, id)
      return { success: true }
    },
  }
}
