import { defineFeature } from '../../feature.js'
import { emailPasswordRoutes } from './routes.js'

/**
 * Email and password (better-auth's emailAndPassword + emailVerification options): sign-up,
 * sign-in (the password sign-in sequence username sign-in shares), the password policy, email
 * verification and password reset, with their mail.
 */
export const emailPasswordFeature = defineFeature({
  id: 'email-password',
  routes: emailPasswordRoutes,
})
