import { describeDuration, formatNoticeTime, greet, maskEmail, type Recipient, renderMail } from '../../mail/templates.js'
import type { OutgoingMail } from '../../mail/types.js'
import { hostedPageURL } from '../../http/hosted-page-url.js'

/**
 * The account feature's messages: the link that confirms deleting one's account, and the security
 * notices (notices.ts decides when each is sent; `accountNotices.*` switches each off). Every notice
 * says what happened and when, from which device and address when known, and links to the account
 * center with what to do if it was not the person.
 */

export function deleteAccountEmail(appName: string, user: Recipient, url: string, expiresInSeconds: number): OutgoingMail {
  return renderMail({
    to: user.email,
    kind: 'delete-account',
    subject: `Confirm the deletion of your ${appName} account`,
    appName,
    greeting: greet(user),
    lines: [
      'Someone asked to delete your account. Deletion removes your profile, sign-in methods and sessions and cannot be undone.',
      `The link below is valid for ${describeDuration(expiresInSeconds)}; open it while signed in.`,
    ],
    action: { label: 'Delete my account', url },
    footer: 'If you did not ask for this, ignore this message: nothing will be deleted.',
  })
}

/** What every security notice is rendered with. */
export interface NoticeFrame {
  appName: string
  /** The API's base URL (origin and base path): the account center is its `account` page (hostedPageURL). */
  baseURL: string
  at: Date
  /** "Firefox on Windows, address 192.0.2.10": the request's device and address, null when unknown or not the person's. */
  from: string | null
}

/** The security notices' kinds (the Email view lists each as an editable template). */
export const NOTICE_KINDS = {
  passwordChanged: 'password-changed-notice',
  emailChanged: 'email-changed-notice',
  twoFactorDisabled: 'two-factor-disabled-notice',
  passkeyAdded: 'passkey-added-notice',
  appPasswordCreated: 'app-password-created-notice',
  newDeviceSignIn: 'new-sign-in-notice',
} as const

function notice(
  frame: NoticeFrame,
  user: Recipient,
  kind: string,
  subject: string,
  what: string,
  ifNotYou: string,
  to = user.email,
): OutgoingMail {
  const { appName, baseURL } = frame
  return renderMail({
    to,
    kind,
    subject,
    appName,
    greeting: greet(user),
    lines: [`${what}`, ...(frame.from ? [`From: ${frame.from}.`] : [])],
    action: { label: 'Open your account', url: hostedPageURL({ baseURL }, 'account') },
    footer: `${ifNotYou} Tell the administrator of ${appName}, and see your recent sign-ins and end the sessions you do not recognise at ${hostedPageURL({ baseURL }, 'account/activity')}`,
  })
}

const when = (frame: NoticeFrame) => `On ${formatNoticeTime(frame.at)}`

/** Sent to the account's address when its password was changed, reset or set by an administrator. */
export function passwordChangedNotice(frame: NoticeFrame, user: Recipient, how: 'changed' | 'reset' | 'set-by-admin'): OutgoingMail {
  const what = { changed: 'changed', reset: 'reset', 'set-by-admin': 'set by an administrator' }[how]
  return notice(
    frame,
    user,
    NOTICE_KINDS.passwordChanged,
    `Your ${frame.appName} password was changed`,
    `${when(frame)} the password of your ${frame.appName} account (${user.email}) was ${what}.`,
    'If you did not do this, reset your password now from the sign-in page.',
  )
}

/** Sent to the previous address once an account's email address changed (any path). */
export function emailChangedNotice(frame: NoticeFrame, user: Recipient, previousEmail: string, newEmail: string): OutgoingMail {
  return notice(
    frame,
    user,
    NOTICE_KINDS.emailChanged,
    `The email address of your ${frame.appName} account was changed`,
    `${when(frame)} the email address of your ${frame.appName} account was changed from ${previousEmail} to ${maskEmail(newEmail)}. Messages about the account now go to the new address.`,
    `If you did not make this change, your account may be in someone else's hands: reset your password at once.`,
    previousEmail,
  )
}

export function twoFactorDisabledNotice(frame: NoticeFrame, user: Recipient): OutgoingMail {
  return notice(
    frame,
    user,
    NOTICE_KINDS.twoFactorDisabled,
    `Two-factor authentication was turned off for your ${frame.appName} account`,
    `${when(frame)} two-factor authentication was turned off for your ${frame.appName} account (${user.email}): your password alone now signs you in.`,
    'If you did not do this, change your password and turn two-factor authentication on again.',
  )
}

export function passkeyAddedNotice(frame: NoticeFrame, user: Recipient, name: string | null): OutgoingMail {
  return notice(
    frame,
    user,
    NOTICE_KINDS.passkeyAdded,
    `A passkey was added to your ${frame.appName} account`,
    `${when(frame)} a passkey${name ? ` named "${name}"` : ''} was added to your ${frame.appName} account (${user.email}); it signs you in without a password.`,
    'If you did not add it, remove it on the Passkeys page of your account and change your password.',
  )
}

export function appPasswordCreatedNotice(frame: NoticeFrame, user: Recipient, name: string): OutgoingMail {
  return notice(
    frame,
    user,
    NOTICE_KINDS.appPasswordCreated,
    `An app password was created for your ${frame.appName} account`,
    `${when(frame)} an app password named "${name}" was created for your ${frame.appName} account (${user.email}).`,
    'If you did not create it, revoke it on the App passwords page of your account and change your password.',
  )
}

export function newDeviceSignInNotice(frame: NoticeFrame, user: Recipient): OutgoingMail {
  return notice(
    frame,
    user,
    NOTICE_KINDS.newDeviceSignIn,
    `New sign-in to your ${frame.appName} account`,
    `${when(frame)} someone signed in to your ${frame.appName} account (${user.email}) from a device or network not used in the last 90 days.`,
    'If it was not you, change your password now.',
  )
}
