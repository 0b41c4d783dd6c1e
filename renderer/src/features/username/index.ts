import { definePanelFeature } from '../panel-feature'

/** The username feature in the control panel (renderer/src/features/panel-feature.ts). */
export const usernamePanel = definePanelFeature({
  name: 'username',
  settings: [
    {
      section: 'sign-in',
      fields: [
        {
          path: 'username.minUsernameLength',
          label: 'Shortest username',
          help: 'For sign-in with a username, in characters.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'username.maxUsernameLength',
          label: 'Longest username',
          help: 'In characters.',
          kind: 'number',
          min: 1,
        },
      ],
    },
  ],
})
