import { describeDuration, formatNoticeTime, greet, maskEmail, type Recipient, renderMail } from '../../mail/templates.js'
import type { OutgoingMail } from '../../mail/types.js'

/**
 * The email-password feature's messages: the verification link, the reset link, the notice that
 * someone signed up with a taken address, and the notices of a changed password or address (also
 * sent by the account feature's change-password / change-email and by admin set-user-password).
 * The change-email confirmation lives here too: GET /verify-email applies it.
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

/** Sent to the previous address once an account's email address changed (either path). */
export function emailChangedNotice(appName: string, user: Recipient, newEmail: string, at: Date): OutgoingMail {
  return renderMail({
    to: user.email,
    kind: 'email-changed-notice',
    subject: `The email address of your ${appName} account was changed`,
    appName,
    greeting: greet(user),
    lines: [
      `On ${formatNoticeTime(at)} the email address of your ${appName} account was changed from ${user.email} to ${maskEmail(newEmail)}.`,
      'Messages about the account now go to the new address; this is the last one sent to this address.',
    ],
    footer: `If you did not make this change, your account may be in someone else's hands: contact the administrator of ${appName} at once and reset your password.`,
  })
}

/** Sent to the account's address when its password was changed, reset or set by an administrator. */
export function passwordChangedNotice(appName: string, user: Recipient, at: Date, how: 'changed' | 'reset' | 'set-by-admin'): OutgoingMail {
  const what = { changed: 'changed', reset: 'reset with a link sent to this address', 'set-by-admin': 'set by an administrator' }[how]
  return renderMail({
    to: user.email,
    kind: 'password-changed-notice',
    subject: `Your ${appName} password was changed`,
    appName,
    greeting: greet(user),
    lines: [`On ${formatNoticeTime(at)} the password of your ${appName} account (${user.email}) was ${what}.`],
    footer: `If you did not do this, reset your password now from the sign-in page and contact the administrator of ${appName}.`,
  })
}
