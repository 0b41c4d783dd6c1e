import { describeDuration, greet, type Recipient, renderMail } from '../../mail/templates.js'
import type { OutgoingMail } from '../../mail/types.js'

/**
 * The email-password feature's messages: the verification link, the reset link, the notice that
 * someone signed up with a taken address. The change-email confirmation lives here too: GET
 * /verify-email applies it. The security notices (a changed password or address, …) are the
 * account feature's (account/notices.ts).
 */

export function verificationEmail(appName: string, user: Recipient, url: string): OutgoingMail {
  return renderMail({
    to: user.email,
    kind: 'verification',
    subject: `Verify your email address for ${appName}`,
    appName,
    greeting: greet(user),
    lines: [`Please confirm that ${user.email} is your email address.`],
    action: { label: 'Verify email address', url },
    footer: 'If you did not ask for this, you can ignore this message.',
  })
}

export function passwordResetEmail(appName: string, user: Recipient, url: string, expiresInSeconds: number): OutgoingMail {
  return renderMail({
    to: user.email,
    kind: 'password-reset',
    subject: `Reset your ${appName} password`,
    appName,
    greeting: greet(user),
    lines: [
      'Someone asked to reset the password of your account.',
      `The link below is valid for ${describeDuration(expiresInSeconds)} and can be used once.`,
    ],
    action: { label: 'Choose a new password', url },
    footer: 'If you did not ask for this, ignore this message: your password stays as it is.',
  })
}

/**
 * Sent instead of an error when someone signs up with an address that already has an account
 * while email verification is required: the answer to the request reveals nothing, the owner
 * learns what happened.
 */
export function existingAccountEmail(appName: string, user: Recipient): OutgoingMail {
  return renderMail({
    to: user.email,
    kind: 'account-exists',
    subject: `Someone tried to sign up to ${appName} with your address`,
    appName,
    greeting: greet(user),
    lines: [
      `Someone tried to create a new ${appName} account with this email address, which already has one.`,
      'If it was you, sign in with your existing account, or reset your password if you forgot it.',
    ],
    footer: 'If it was not you, you can ignore this message: your account is unchanged.',
  })
}

export function changeEmailConfirmation(appName: string, user: Recipient, newEmail: string, url: string): OutgoingMail {
  return renderMail({
    to: user.email,
    kind: 'change-email',
    subject: `Confirm your new email address for ${appName}`,
    appName,
    greeting: greet(user),
    lines: [`Someone asked to change the email address of your account from ${user.email} to ${newEmail}.`],
    action: { label: 'Approve the change', url },
    footer: 'If you did not ask for this, ignore this message and consider changing your password.',
  })
}
