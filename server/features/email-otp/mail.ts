import { describeDuration, greet, renderMail } from '../../mail/templates.js'
import type { OutgoingMail } from '../../mail/types.js'

export type OTPType = 'sign-in' | 'email-verification' | 'forget-password' | 'change-email'

const PURPOSE: Record<OTPType, { subject: (app: string) => string; line: (app: string) => string }> = {
  'sign-in': { subject: (app) => `Your ${app} sign-in code`, line: (app) => `Use this code to sign in to ${app}:` },
  'email-verification': { subject: (app) => `Your ${app} verification code`, line: () => 'Use this code to verify your email address:' },
  'forget-password': { subject: (app) => `Your ${app} password reset code`, line: () => 'Use this code to reset your password:' },
  'change-email': {
    subject: (app) => `Your ${app} email change code`,
    line: (app) => `Use this code to make this address your ${app} email:`,
  },
}

/** The one-time code (better-auth's `sendVerificationOTP`), mailed through the outbox. */
export function emailOTPMail(
  appName: string,
  to: { email: string; name?: string | null },
  otp: string,
  type: OTPType,
  expiresInSeconds: number,
): OutgoingMail {
  const purpose = PURPOSE[type]
  return renderMail({
    to: to.email,
    kind: `email-otp-${type}`,
    subject: `${purpose.subject(appName)}: ${otp}`,
    appName,
    greeting: greet({ email: to.email, name: to.name ?? '' }),
    lines: [purpose.line(appName), otp, `It is valid for ${describeDuration(expiresInSeconds)} and can be used once.`],
    footer: 'If you did not ask for this, you can ignore this message.',
  })
}
