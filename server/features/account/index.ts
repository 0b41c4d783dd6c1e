import { defineFeature } from '../../feature.js'
import { deleteAccountEmail } from './mail.js'
import { accountRoutes } from './routes.js'
import { ACCOUNT_ERR } from './errors.js'
import { configSections } from './config.js'

/**
 * The signed-in user's own account (better-auth's user / account options): update-user,
 * change-password, change-email, delete-user with its mailed confirmation, list-accounts and
 * unlink-account, and the notices to the old address. set-password (server only) is in rules.ts.
 */
export const accountFeature = defineFeature({
  id: 'account',
  config: configSections,
  errors: ACCOUNT_ERR,
  routes: accountRoutes,
  mailPreviews: ({ appName, user, link }) => ({
    'delete-account': () => deleteAccountEmail(appName, user, link('/delete-user/callback?token=sample'), 86400),
  }),
})
