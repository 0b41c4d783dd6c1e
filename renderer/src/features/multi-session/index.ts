import { definePanelFeature } from '../panel-feature'

/** The multi-session feature in the control panel (renderer/src/features/panel-feature.ts). */
export const multiSessionPanel = definePanelFeature({
  name: 'multi-session',
  settings: [
    {
      section: 'sessions',
      fields: [
        {
          path: 'multiSession.enabled',
          label: 'Several accounts per browser',
          help: 'A browser keeps a session for each account and switches between them.',
          kind: 'switch',
        },
        {
          path: 'multiSession.maximumSessions',
          label: 'Accounts per browser',
          help: 'The most sessions one browser keeps.',
          kind: 'number',
          min: 1,
        },
      ],
    },
  ],
})
