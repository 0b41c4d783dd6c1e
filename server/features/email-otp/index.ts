import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'
import { EMAIL_OTP_ERRORS } from './errors.js'
import { emailOTPMail } from './mail.js'
import { emailOTPRoutes } from './routes.js'

/** better-auth's emailOTP plugin: one-time codes by mail to sign in, verify an address, reset a password. */
export const emailOTPFeature = defineFeature({
  id: 'email-otp',
  config: configSections,
  errors: EMAIL_OTP_ERRORS,
  routes: emailOTPRoutes,
  mailPreviews: ({ appName, user }) => ({
    'email-otp-sign-in': () => emailOTPMail(appName, user, '123456', 'sign-in', 300),
    'email-otp-email-verification': () => emailOTPMail(appName, user, '123456', 'email-verification', 300),
    'email-otp-forget-password': () => emailOTPMail(appName, user, '123456', 'forget-password', 300),
    'email-otp-change-email': () => emailOTPMail(appName, user, '123456', 'change-email', 300),
  }),
})
