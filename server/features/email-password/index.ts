import { defineFeature } from '../../feature.js'
import { changeEmailConfirmation, existingAccountEmail, passwordResetEmail, verificationEmail } from './mail.js'
import { emailPasswordRoutes } from './routes.js'
import { EMAIL_PASSWORD_ERR } from './errors.js'
import { configSections } from './config.js'

/**
 * Email and password (better-auth's emailAndPassword + emailVerification options): sign-up,
 * sign-in (the password sign-in sequence username sign-in shares), the password policy, email
 * verification and password reset, with their mail.
 */
export const emailPasswordFeature = defineFeature({
  id: 'email-password',
  config: configSections,
  errors: EMAIL_PASSWORD_ERR,
  routes: emailPasswordRoutes,
  mailPreviews: ({ appName, user, link }) => ({
    verification: () => verificationEmail(appName, user, link('/verify-email?token=sample')),
    'password-reset': () => passwordResetEmail(appName, user, link('/reset-password/sample'), 3600),
    'change-email': () => changeEmailConfirmation(appName, user, 'ada@new.example.com', link('/verify-email?token=sample')),
    'account-exists': () => existingAccountEmail(appName, user),
  }),
})
