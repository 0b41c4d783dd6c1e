import { describeDuration, greet, type Recipient, renderMail } from '../../mail/templates.js'
import type { OutgoingMail } from '../../mail/types.js'

/** The account feature's own message: the link that confirms deleting one's account. */

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
