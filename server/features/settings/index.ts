import { defineFeature } from '../../feature.js'
import { settingsError } from './errors.js'
import { settingsPanel } from './panel.js'
import { securityPanel } from './security.js'

/** The Settings view: the live configuration (validated and applied) and the brute-force locks. */
export const settingsFeature = defineFeature({
  id: 'settings',
  errors: settingsError,
  panel: (env) => ({ ...settingsPanel(env), ...securityPanel(env) }),
})
