import { renderMail } from './templates.js'
import type { OutgoingMail } from './types.js'

/**
 * Mail templates edited in the panel (issue 31 §3): per message kind, a subject and a plain-text
 * body with placeholders, stored in the config (`mail.templates`). The outbox applies them to
 * every message of that kind as it is queued: the body replaces the greeting and the lines, the
 * button with the message's link, the footer, the account-center line and the signature stay as
 * built in (so a template cannot lose the link the message exists for). Paragraphs are separated
 * by blank lines; the HTML part escapes everything, as for the built-in messages.
 */

export const MAIL_PLACEHOLDERS = {
  appName: 'the application name (mail.appName)',
  email: "the recipient's address",
  greeting: '"Hello Ada," (or "Hello," when the name is unknown)',
  message: "the built-in message's text (its paragraphs)",
  url: "the message's link (also shown as the button)",
} as const

export type MailPlaceholder = keyof typeof MAIL_PLACEHOLDERS

export interface MailTemplate {
  subject: string
  body: string
}

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g

/** What is wrong with a template for a message of this kind (`hasLink`: it carries a link), or null. */
export function templateProblem(template: MailTemplate, hasLink: boolean): { field: 'subject' | 'body'; message: string } | null {
  for (const field of ['subject', 'body'] as const) {
    const value = template[field]
    if (!value.trim()) return { field, message: field === 'subject' ? 'Enter a subject' : 'Enter the message' }
    if (field === 'subject' && /[\r\n]/.test(value)) return { field, message: 'The subject is one line' }
    for (const match of value.matchAll(PLACEHOLDER)) {
      const name = match[1] ?? ''
      if (!Object.hasOwn(MAIL_PLACEHOLDERS, name)) {
        const known = Object.keys(MAIL_PLACEHOLDERS)
          .filter((k) => hasLink || k !== 'url')
          .map((k) => `{{${k}}}`)
          .join(', ')
        return { field, message: `Unknown placeholder {{${name}}}: use ${known}` }
      }
      if (name === 'url' && !hasLink) return { field, message: 'This message has no link: {{url}} cannot be used' }
    }
    const unclosed = value.replace(PLACEHOLDER, '')
    if (/\{\{|\}\}/.test(unclosed)) return { field, message: 'A placeholder is not closed: write it as {{name}}' }
  }
  return null
}

const fill = (text: string, values: Record<MailPlaceholder, string>): string =>
  text.replace(PLACEHOLDER, (whole, name: string) => (Object.hasOwn(values, name) ? values[name as MailPlaceholder] : whole))

/**
 * The message as it is queued: re-rendered from its kind's edited template, and with the link to
 * the recipient's account center (`account`, MailLayout.account) under the footer, unless the
 * message's own button already leads there (the security notices). A message without a layout
 * (rendered by its feature alone: the organization invitation) is left as it is.
 */
export function applyMailTemplate(
  mail: OutgoingMail,
  templates: Record<string, MailTemplate> | undefined,
  account?: string | null,
): OutgoingMail {
  const template = templates?.[mail.kind]
  const original = mail.layout
  if (!original) return mail
  const withAccount = account && original.action?.url !== account ? account : undefined
  if (!template && !withAccount) return mail
  const layout = { ...original, ...(withAccount ? { account: withAccount } : {}) }
  if (!template) return renderMail(layout)
  const values: Record<MailPlaceholder, string> = {
    appName: layout.appName,
    email: mail.to,
    greeting: layout.greeting,
    message: layout.lines.join('\n\n'),
    url: layout.action?.url ?? '',
  }
  const subject = fill(template.subject, values)
    .replace(/[\r\n]+/g, ' ')
    .trim()
  const lines = fill(template.body, values)
    .replace(/\r\n?/g, '\n')
    .split(/\n{2,}/)
    .map((p) => p.trim())
    .filter(Boolean)
  return renderMail({ ...layout, subject, greeting: '', lines })
}
