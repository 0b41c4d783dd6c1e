import { definePanelFeature } from '../panel-feature'

/** The account feature in the control panel (renderer/src/features/panel-feature.ts). */
export const accountPanel = definePanelFeature({
  name: 'account',
  settings: [
    {
      section: 'users',
      fields: [
        {
          path: 'user.changeEmail.enabled',
          label: 'Users may change their email',
          help: 'The new address is confirmed by a link.',
          kind: 'switch',
        },
        {
          path: 'user.changeEmail.sendChangeEmailVerification',
          label: 'Ask the current address first',
          help: 'A confirmation goes to the old address before the change.',
          kind: 'switch',
        },
        {
          path: 'user.changeEmail.updateEmailWithoutVerification',
          label: 'Change an unverified address at once',
          help: 'Off: the change waits for the link mailed to the new address, so a stolen session cannot move the account.',
          kind: 'switch',
        },
        {
          path: 'user.changeEmail.requireFreshSession',
          label: 'Email change needs a recent sign-in',
          help: 'See "Recent sign-in window" under Sessions.',
          kind: 'switch',
        },
        {
          path: 'user.deleteUser.enabled',
          label: 'Users may delete their account',
          help: 'From the app, through the API.',
          kind: 'switch',
        },
        {
          path: 'user.deleteUser.sendDeleteAccountVerification',
          label: 'Confirm deletion by email',
          help: 'The account is deleted only when the mailed link is followed.',
          kind: 'switch',
        },
        {
          path: 'user.deleteUser.deleteTokenExpiresIn',
          label: 'Deletion link lifetime',
          help: 'How long the mailed link works.',
          kind: 'seconds',
        },
        {
          path: 'account.accountLinking.enabled',
          label: 'Link provider accounts',
          help: 'Signing in with a provider joins the account with the same email.',
          kind: 'switch',
        },
        {
          path: 'account.accountLinking.trustedProviders',
          label: 'Providers trusted for linking',
          help: 'Their email is believed even when they do not say it is verified.',
          kind: 'tags',
        },
        {
          path: 'account.accountLinking.allowDifferentEmails',
          label: 'Link accounts with another email',
          help: 'A signed-in user may link a provider account whose email differs.',
          kind: 'switch',
        },
        {
          path: 'account.accountLinking.allowUnlinkingAll',
          label: 'Allow unlinking the last sign-in method',
          help: 'A user could lock themselves out.',
          kind: 'switch',
        },
      ],
    },
    {
      section: 'mail',
      fields: [
        {
          path: 'accountNotices.passwordChanged',
          label: 'Notice: password changed',
          help: 'Mail the person when their password is changed, reset or set by an administrator.',
          kind: 'switch',
        },
        {
          path: 'accountNotices.emailChanged',
          label: 'Notice: email changed',
          help: 'Mail the previous address when the account moves to a new one.',
          kind: 'switch',
        },
        {
          path: 'accountNotices.twoFactorDisabled',
          label: 'Notice: second factor turned off',
          help: 'Mail the person when their authenticator or email codes are turned off.',
          kind: 'switch',
        },
        {
          path: 'accountNotices.passkeyAdded',
          label: 'Notice: passkey added',
          help: 'Mail the person when a passkey is registered on their account.',
          kind: 'switch',
        },
        {
          path: 'accountNotices.appPasswordCreated',
          label: 'Notice: app password created',
          help: 'Mail the person when an app password is created on their account.',
          kind: 'switch',
        },
        {
          path: 'accountNotices.newDeviceSignIn',
          label: 'Notice: sign-in from a new device',
          help: 'A browser and network not seen in their last 90 days; never for a first sign-in.',
          kind: 'switch',
        },
      ],
    },
  ],
})
