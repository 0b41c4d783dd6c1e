import { describeDuration, greet, renderMail } from '../../mail/templates.js'
import type { OutgoingMail } from '../../mail/types.js'

/** The sign-in link (better-auth's `sendMagicLink`), mailed through the outbox. */
export function magicLinkEmail(
  appName: string,
  to: { email: string; name?: string | null },
  url: string,
  expiresInSeconds: number,
): OutgoingMail {
  return renderMail({
    to: to.email,
    kind: 'magic-link',
    subject: `Sign in to ${appName}`,
    appName,
    greeting: greet({ email: to.email, name: to.name ?? '' }),
    lines: [
      `Someone asked to sign in to ${appName} as ${to.email}.`,
      `The link below is valid for ${describeDuration(expiresInSeconds)} and can be used once.`,
    ],
    action: { label: 'Sign in', url },
    footer: 'If you did not ask for this, you can ignore this message.',
  })
}
