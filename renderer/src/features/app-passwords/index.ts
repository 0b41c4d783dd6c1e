import { definePanelFeature } from '../panel-feature'

/**
 * App passwords in the control panel: no view of their own; UserAppPasswords.tsx is the users
 * drawer's list of a user's app passwords (under Second factors). Whether they survive a person's
 * own password change is one switch of the Settings view's Users section.
 */
export const appPasswordsPanel = definePanelFeature({
  name: 'app-passwords',
  settings: [
    {
      section: 'users',
      fields: [
        {
          path: 'appPasswords.keepOnPasswordChange',
          label: 'Keep app passwords across a password change',
          help: 'Off: a password change, a reset or an administrator setting the password revokes the person’s app passwords. On: they survive a change the person makes themself.',
          kind: 'switch',
        },
      ],
    },
  ],
})
