import { definePanelFeature } from '../panel-feature'

/** The email-otp feature in the control panel (renderer/src/features/panel-feature.ts). */
export const emailOtpPanel = definePanelFeature({
  name: 'email-otp',
  settings: [
    {
      section: 'sign-in',
      fields: [
        {
          path: 'emailOTP.enabled',
          label: 'Email codes',
          help: 'People can sign in, verify or reset with a code sent by email.',
          kind: 'switch',
        },
        {
          path: 'emailOTP.otpLength',
          label: 'Email code length',
          help: 'Digits in each code.',
          kind: 'number',
          min: 4,
        },
        {
          path: 'emailOTP.expiresIn',
          label: 'Email code lifetime',
          help: 'A code older than this is refused.',
          kind: 'seconds',
        },
        {
          path: 'emailOTP.allowedAttempts',
          label: 'Guesses per code',
          help: 'Wrong guesses before the code is void.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'emailOTP.disableSignUp',
          label: 'No new accounts by email code',
          help: 'A code for an unknown address creates no account.',
          kind: 'switch',
        },
        {
          path: 'emailOTP.changeEmail.enabled',
          label: 'Change email by code',
          help: 'A signed-in person confirms a new address with a code sent to it.',
          kind: 'switch',
        },
        {
          path: 'emailOTP.changeEmail.verifyCurrentEmail',
          label: 'Also confirm the current address',
          help: 'A code sent to the current address is needed first.',
          kind: 'switch',
        },
        {
          path: 'emailOTP.rateLimit.window',
          label: 'Email code limit window',
          help: 'Seconds over which code requests are counted.',
          kind: 'seconds',
        },
        {
          path: 'emailOTP.rateLimit.max',
          label: 'Email code requests per window',
          help: 'Per client address.',
          kind: 'number',
          min: 1,
        },
      ],
    },
  ],
})
