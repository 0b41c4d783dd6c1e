import { definePanelFeature } from '../panel-feature'

/** The last-login-method feature in the control panel (renderer/src/features/panel-feature.ts). */
export const lastLoginMethodPanel = definePanelFeature({
  name: 'last-login-method',
  settings: [
    {
      section: 'sign-in',
      fields: [
        {
          path: 'lastLoginMethod.enabled',
          label: 'Remember the last sign-in method',
          help: 'A cookie tells the app how the person last signed in.',
          kind: 'switch',
        },
        {
          path: 'lastLoginMethod.cookieName',
          label: 'Last-method cookie name',
          help: 'The cookie the app reads.',
          kind: 'text',
        },
        {
          path: 'lastLoginMethod.maxAge',
          label: 'Last-method cookie lifetime',
          help: 'How long the browser keeps it.',
          kind: 'seconds',
        },
        {
          path: 'lastLoginMethod.storeInDatabase',
          label: 'Keep the last method on the user',
          help: 'Also stored as the user field lastLoginMethod.',
          kind: 'switch',
        },
      ],
    },
  ],
})
