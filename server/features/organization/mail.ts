import { escapeHtml } from '../../mail/templates.js'
import { hostedPageURL } from '../../http/hosted-page-url.js'

/** The organization invitation mail: plain text and HTML, both carrying the accept link. */

export interface InvitationMailInput {
  organizationName: string
  /** Who sends the invitation (the mail names them). */
  inviterName: string
  /** Their address, shown beside the name; null for the operator, who has none. */
  inviterEmail: string | null
  role: string
  /** Where the recipient accepts (or declines) the invitation. */
  url: string
  expiresAt: Date
}

export interface RenderedMail {
  subject: string
  text: string
  html: string
}

/** Mail headers must stay on one line whatever the organization is called. */
const oneLine = (value: string): string => value.replace(/[\r\n]+/g, ' ').trim()

export function renderInvitationMail(input: InvitationMailInput): RenderedMail {
  const org = oneLine(input.organizationName)
  const inviter = oneLine(input.inviterName) || input.inviterEmail || 'An administrator'
  const address = input.inviterEmail && inviter !== input.inviterEmail ? ` (${input.inviterEmail})` : ''
  const expires = input.expiresAt
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, ' UTC')
  const subject = `${inviter} invited you to join ${org}`
  const text = [
    `${inviter}${address} invited you to join ${org} as ${input.role}.`,
    '',
    'Open this link to accept or decline the invitation:',
    input.url,
    '',
    `The invitation expires on ${expires}. If you did not expect it, you can ignore this mail.`,
  ].join('\n')
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1b1e">
<p><strong>${escapeHtml(inviter)}</strong>${escapeHtml(address)} invited you to join <strong>${escapeHtml(org)}</strong> as ${escapeHtml(input.role)}.</p>
<p><a href="${escapeHtml(input.url)}" style="display: inline-block; padding: 10px 16px; background: #228be6; color: #fff; border-radius: 4px; text-decoration: none">Accept or decline the invitation</a></p>
<p>Or copy this link into your browser: <br><a href="${escapeHtml(input.url)}">${escapeHtml(input.url)}</a></p>
<p style="color: #868e96">The invitation expires on ${escapeHtml(expires)}. If you did not expect it, you can ignore this mail.</p>
</body></html>`
  return { subject, text, html }
}

/**
 * The accept link: the configured template (`{id}` replaced), else the hosted accept-invitation
 * page `{baseURL}/ui/accept-invitation?id={id}` (issue 31 §3), else (hosted pages off)
 * {origin}/accept-invitation/{id} for the app to serve.
 */
export function invitationURL(template: string | null | undefined, baseURL: string, invitationId: string, hostedPages = true): string {
  const id = encodeURIComponent(invitationId)
  if (template) return template.includes('{id}') ? template.replaceAll('{id}', id) : `${template.replace(/\/+$/, '')}/${id}`
  if (hostedPages) return hostedPageURL({ baseURL }, 'accept-invitation', { id: invitationId })
  return `${new URL(baseURL).origin}/accept-invitation/${id}`
}
