import { definePanelFeature } from '../panel-feature'

/**
 * App passwords in the control panel: no view and no settings of their own; UserAppPasswords.tsx
 * is the users drawer's list of a user's app passwords (under Second factors).
 */
export const appPasswordsPanel = definePanelFeature({ name: 'app-passwords' })
