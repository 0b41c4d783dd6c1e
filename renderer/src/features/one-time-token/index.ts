import { definePanelFeature } from '../panel-feature'

/** The one-time-token feature in the control panel (renderer/src/features/panel-feature.ts). */
export const oneTimeTokenPanel = definePanelFeature({
  name: 'one-time-token',
  settings: [
    {
      section: 'sign-in',
      fields: [
        {
          path: 'oneTimeToken.enabled',
          label: 'One-time tokens',
          help: 'A signed-in app can mint a single-use token for its session.',
          kind: 'switch',
        },
        {
          path: 'oneTimeToken.expiresIn',
          label: 'One-time token lifetime',
          help: 'In minutes, as better-auth counts it.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'oneTimeToken.disableClientRequest',
          label: 'Server-side one-time tokens only',
          help: 'Browsers cannot ask for a token themselves.',
          kind: 'switch',
        },
        {
          path: 'oneTimeToken.disableSetSessionCookie',
          label: 'Verify without a cookie',
          help: 'Verifying a token answers the session but sets no cookie.',
          kind: 'switch',
        },
        {
          path: 'oneTimeToken.storeToken',
          label: 'How tokens are stored',
          help: 'Hashed keeps a database reader from using a token.',
          kind: 'select',
          options: [
            {
              value: 'plain',
              label: 'Plain',
            },
            {
              value: 'hashed',
              label: 'Hashed',
            },
          ],
        },
      ],
    },
  ],
})
