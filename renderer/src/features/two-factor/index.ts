import { definePanelFeature } from '../panel-feature'

/** The two-factor feature in the control panel (renderer/src/features/panel-feature.ts). */
export const twoFactorPanel = definePanelFeature({
  name: 'two-factor',
  settings: [
    {
      section: 'multi-factor',
      fields: [
        {
          path: 'twoFactor.enabled',
          label: 'Allow two-factor sign-in',
          help: 'Users can add an authenticator app, mailed codes and backup codes.',
          kind: 'switch',
        },
        {
          path: 'twoFactor.issuer',
          label: 'Name in authenticator apps',
          help: 'Shown beside the code in the app; empty uses the mail app name.',
          kind: 'optional-text',
        },
        {
          path: 'twoFactor.totpOptions.disable',
          label: 'Turn off authenticator apps',
          help: 'Only mailed codes and backup codes remain as second factors.',
          kind: 'switch',
        },
        {
          path: 'twoFactor.totpOptions.digits',
          label: 'Digits per app code',
          help: '6 or 8; most authenticator apps show 6.',
          kind: 'number',
          min: 6,
        },
        {
          path: 'twoFactor.totpOptions.period',
          label: 'Seconds per app code',
          help: 'How long each code is shown; apps expect 30.',
          kind: 'number',
          min: 15,
        },
        {
          path: 'twoFactor.totpOptions.window',
          label: 'Codes accepted either side',
          help: 'Time steps of clock drift tolerated (1 accepts the previous and the next code).',
          kind: 'number',
          min: 0,
        },
        {
          path: 'twoFactor.otpOptions.enabled',
          label: 'Codes by mail',
          help: 'Users can ask for a one-time code sent to their address.',
          kind: 'switch',
        },
        {
          path: 'twoFactor.otpOptions.period',
          label: 'Minutes a mailed code lasts',
          help: 'After this the user asks for a new code.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'twoFactor.otpOptions.digits',
          label: 'Digits per mailed code',
          help: 'Length of the code in the mail.',
          kind: 'number',
          min: 6,
        },
        {
          path: 'twoFactor.otpOptions.allowedAttempts',
          label: 'Tries per mailed code',
          help: 'Wrong entries allowed before the code is void.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'twoFactor.backupCodeOptions.amount',
          label: 'Backup codes per user',
          help: 'Single-use codes for when the phone is lost.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'twoFactor.backupCodeOptions.length',
          label: 'Characters per backup code',
          help: 'Longer codes are harder to guess.',
          kind: 'number',
          min: 8,
        },
        {
          path: 'twoFactor.allowedAttempts',
          label: 'Tries per sign-in challenge',
          help: 'Wrong codes allowed before the user must sign in again.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'twoFactor.trustDeviceMaxAge',
          label: 'Trusted browser lasts',
          help: 'A browser marked as trusted skips the second step this long.',
          kind: 'seconds',
        },
        {
          path: 'twoFactor.twoFactorCookieMaxAge',
          label: 'Time to enter the code',
          help: 'How long the second step waits after the password.',
          kind: 'seconds',
        },
        {
          path: 'twoFactor.enforcement.roles',
          label: 'Roles that must use a second factor',
          help: 'e.g. admin: these users must enrol an app or a passkey.',
          kind: 'tags',
        },
        {
          path: 'twoFactor.enforcement.gracePeriod',
          label: 'Time to enrol',
          help: 'After the first sign-in under the rule; then sign-in is refused until they enrol.',
          kind: 'seconds',
        },
      ],
    },
  ],
})
