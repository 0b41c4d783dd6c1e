import { definePanelFeature } from '../panel-feature'

/** The email-password feature in the control panel (renderer/src/features/panel-feature.ts). */
export const emailPasswordPanel = definePanelFeature({
  name: 'email-password',
  settings: [
    {
      section: 'sign-in',
      fields: [
        {
          path: 'emailAndPassword.enabled',
          label: 'Email and password sign-in',
          help: 'Users sign in with an email address and a password.',
          kind: 'switch',
        },
        {
          path: 'emailAndPassword.disableSignUp',
          label: 'Close sign-up',
          help: 'Only an administrator can create new accounts.',
          kind: 'switch',
        },
        {
          path: 'emailAndPassword.autoSignIn',
          label: 'Sign in right after sign-up',
          help: 'A new account starts with a session.',
          kind: 'switch',
        },
        {
          path: 'emailAndPassword.minPasswordLength',
          label: 'Shortest password',
          help: 'In characters.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'emailAndPassword.maxPasswordLength',
          label: 'Longest password',
          help: 'In characters.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'emailAndPassword.requireEmailVerification',
          label: 'Require a verified email',
          help: 'Users cannot sign in until they follow the link in the verification email.',
          kind: 'switch',
        },
        {
          path: 'emailVerification.sendVerificationEmail',
          label: 'Verification emails',
          help: 'Users can ask for an email that confirms their address.',
          kind: 'switch',
        },
        {
          path: 'emailVerification.sendOnSignUp',
          label: 'Send the verification email at sign-up',
          help: 'Without being asked.',
          kind: 'switch',
        },
        {
          path: 'emailVerification.autoSignInAfterVerification',
          label: 'Sign in when the link is followed',
          help: 'Following the verification link also opens a session.',
          kind: 'switch',
        },
        {
          path: 'emailVerification.expiresIn',
          label: 'Verification link lifetime',
          help: 'How long the link in the email works.',
          kind: 'seconds',
        },
        {
          path: 'emailAndPassword.sendResetPassword',
          label: 'Password reset by email',
          help: 'Users who forgot their password get a reset link.',
          kind: 'switch',
        },
        {
          path: 'emailAndPassword.resetPasswordTokenExpiresIn',
          label: 'Password reset link lifetime',
          help: 'How long the reset link works.',
          kind: 'seconds',
        },
        {
          path: 'emailAndPassword.revokeSessionsOnPasswordReset',
          label: 'Sign out everywhere after a reset',
          help: 'A password reset ends every session of the account.',
          kind: 'switch',
        },
      ],
    },
  ],
})
