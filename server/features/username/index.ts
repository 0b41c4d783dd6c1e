import { defineFeature } from '../../feature.js'
import { usernameColumns } from './columns.js'
import { readUsernameFields, usernameClash } from './rules.js'
import { usernameRoutes } from './routes.js'
import { USERNAME_ERR } from './errors.js'
import { configSections } from './config.js'

/**
 * Usernames (better-auth's username plugin): sign-in by username, is-username-available, and the
 * username / displayUsername columns every user write reads through `readUserFields`.
 */
export const usernameFeature = defineFeature({
  id: 'username',
  columns: usernameColumns,
  config: configSections,
  errors: USERNAME_ERR,
  routes: usernameRoutes,
  readUserFields: readUsernameFields,
  userFieldClash: usernameClash,
})
