import { renderMail } from '../../mail/templates.js'
import type { OutgoingMail } from '../../mail/types.js'

interface Recipient {
  email: string
  name?: string | null
}

const greet = (user: Recipient) => (user.name ? `Hello ${user.name},` : 'Hello,')

export function twoFactorCodeEmail(appName: string, user: Recipient, code: string, minutes: number): OutgoingMail {
  return renderMail({
    to: user.email,
    kind: 'two-factor-otp',
    subject: `Your ${appName} verification code: ${code}`,
    appName,
    greeting: greet(user),
    lines: [`Your verification code is ${code}.`, `It is valid for ${minutes} minute${minutes === 1 ? '' : 's'} and can be used once.`],
    footer: 'If you did not try to sign in, someone knows your password: change it.',
  })
}

/** Told to the user when an administrator removes one of their second factors. */
export function factorRemovedEmail(appName: string, user: Recipient, what: string): OutgoingMail {
  return renderMail({
    to: user.email,
    kind: 'security-notice',
    subject: `A sign-in method of your ${appName} account was removed`,
    appName,
    greeting: greet(user),
    lines: [`An administrator removed ${what} from your account.`, 'You can set up a second factor again after signing in.'],
    footer: 'If you did not expect this, contact your administrator.',
  })
}
