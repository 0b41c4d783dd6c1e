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

/**
 * The set-up link an administrator mails from the panel (users.sendSetUpLink): a magic link that
 * signs the person in and opens the hosted two-factor page as an enrolment (`?enrol=1`).
 */
export function setUpLinkEmail(
  appName: string,
  to: { email: string; name?: string | null },
  url: string,
  expiresInSeconds: number,
): OutgoingMail {
  return renderMail({
    to: to.email,
    kind: 'set-up-link',
    subject: `Set up two-factor authentication for your ${appName} account`,
    appName,
    greeting: greet({ email: to.email, name: to.name ?? '' }),
    lines: [
      `An administrator of ${appName} asks you to protect your account (${to.email}) with a second factor: an authenticator app on your phone.`,
      `The link below signs you in and opens the set-up page. It is valid for ${describeDuration(expiresInSeconds)} and can be used once.`,
    ],
    action: { label: 'Sign in and set up', url },
    footer: 'If you did not expect this message, do not open the link and tell the administrator.',
  })
}
