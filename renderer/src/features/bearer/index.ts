import { definePanelFeature } from '../panel-feature'

/** The bearer feature in the control panel (renderer/src/features/panel-feature.ts). */
export const bearerPanel = definePanelFeature({
  name: 'bearer',
  settings: [
    {
      section: 'sessions',
      fields: [
        {
          path: 'bearer.enabled',
          label: 'Bearer tokens',
          help: 'Apps may send the session token in an Authorization header.',
          kind: 'switch',
        },
        {
          path: 'bearer.requireSignature',
          label: 'Signed bearer tokens only',
          help: 'An unsigned session token in the header is refused.',
          kind: 'switch',
        },
      ],
    },
  ],
})
