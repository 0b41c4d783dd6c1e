import type { MailLayout, OutgoingMail } from './types.js'

export type { MailLayout } from './types.js'

/**
 * HTML + plain-text messages of the account lifecycle. Every value that comes from a user or a
 * request (names, addresses, URLs) is escaped in the HTML part; links are absolute URLs on the
 * configured base URL (SPEC §2).
 */

export function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')
}

/** The line under every message's footer that leads to the account center (MailLayout.account). */
export const MANAGE_ACCOUNT_LABEL = 'Manage your account'

/**
 * One shape for every message: greeting, a few lines, one button (and the raw link), a footer,
 * the link to the recipient's account center when set, the signature.
 */
export function renderMail(layout: MailLayout): OutgoingMail {
  const { action, account } = layout
  const text = [
    ...(layout.greeting ? [layout.greeting, ''] : []),
    ...layout.lines,
    ...(action ? ['', `${action.label}: ${action.url}`] : []),
    '',
    layout.footer,
    ...(account ? ['', `${MANAGE_ACCOUNT_LABEL}: ${account}`] : []),
    '',
    `— ${layout.appName}`,
  ].join('\n')
  const p = (s: string) => `<p style="margin:0 0 16px">${escapeHtml(s)}</p>`
  const button = action
    ? `<p style="margin:24px 0"><a href="${escapeHtml(action.url)}" style="background:#1c7ed6;color:#fff;padding:10px 18px;border-radius:4px;text-decoration:none;display:inline-block">${escapeHtml(action.label)}</a></p>` +
      `<p style="margin:0 0 16px;font-size:13px;color:#555">If the button does not work, open this link:<br><a href="${escapeHtml(action.url)}">${escapeHtml(action.url)}</a></p>`
    : ''
  const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(layout.subject)}</title></head>
<body style="font-family:system-ui,-apple-system,Segoe UI,sans-serif;color:#222;line-height:1.5;max-width:560px;margin:0 auto;padding:24px">
<h1 style="font-size:20px;margin:0 0 16px">${escapeHtml(layout.subject)}</h1>
${layout.greeting ? p(layout.greeting) : ''}
${layout.lines.map(p).join('\n')}
${button}
<p style="margin:24px 0 0;font-size:13px;color:#555">${escapeHtml(layout.footer)}</p>
${account ? `<p style="margin:8px 0 0;font-size:13px;color:#555">${MANAGE_ACCOUNT_LABEL}: <a href="${escapeHtml(account)}">${escapeHtml(account)}</a></p>\n` : ''}<p style="margin:8px 0 0;font-size:13px;color:#555">— ${escapeHtml(layout.appName)}</p>
</body></html>`
  return { to: layout.to, subject: layout.subject, kind: layout.kind, text, html, layout }
}

export interface Recipient {
  email: string
  name?: string | null
}

export const greet = (user: Recipient) => (user.name ? `Hello ${user.name},` : 'Hello,')

/**
 * An address shown in a notice sent elsewhere: the first and last character of the local part
 * and the domain's top level stay, the rest is starred (j***e@e***.com), so the mail tells the
 * owner where their account went without handing the full address to whoever reads the old inbox.
 */
export function maskEmail(address: string): string {
  const at = address.lastIndexOf('@')
  if (at < 1) return '***'
  const local = address.slice(0, at)
  const domain = address.slice(at + 1)
  const maskedLocal = local.length <= 2 ? `${local[0]}***` : `${local[0]}***${local[local.length - 1]}`
  const dot = domain.lastIndexOf('.')
  const maskedDomain = dot > 0 ? `${domain[0]}***${domain.slice(dot)}` : `${domain[0] ?? ''}***`
  return `${maskedLocal}@${maskedDomain}`
}

/** A moment as every recipient reads it the same way: 2026-11-23 15:55 UTC. */
export function formatNoticeTime(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

export function testEmail(appName: string, to: string): OutgoingMail {
  return renderMail({
    to,
    kind: 'test',
    subject: `${appName} test email`,
    appName,
    greeting: 'Hello,',
    lines: [`This is a test message from ${appName}. Mail delivery works.`],
    footer: 'You received this because an administrator sent a test email from the control panel.',
  })
}

export function describeDuration(seconds: number): string {
  if (seconds % 86400 === 0) return plural(seconds / 86400, 'day')
  if (seconds % 3600 === 0) return plural(seconds / 3600, 'hour')
  if (seconds % 60 === 0) return plural(seconds / 60, 'minute')
  return plural(seconds, 'second')
}

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`
