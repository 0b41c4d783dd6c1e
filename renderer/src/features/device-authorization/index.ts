import { definePanelFeature } from '../panel-feature'

/** The device-authorization feature in the control panel (renderer/src/features/panel-feature.ts). */
export const deviceAuthorizationPanel = definePanelFeature({
  name: 'device-authorization',
  settings: [
    {
      section: 'sign-in',
      fields: [
        {
          path: 'deviceAuthorization.enabled',
          label: 'Device sign-in',
          help: 'A CLI, TV or kiosk shows a code; a signed-in person approves it at /ui/device (RFC 8628).',
          kind: 'switch',
        },
        {
          path: 'deviceAuthorization.expiresIn',
          label: 'Device code lifetime',
          help: 'A code not approved and collected within this time is refused.',
          kind: 'seconds',
          min: 1,
        },
        {
          path: 'deviceAuthorization.interval',
          label: 'Device polling interval',
          help: 'A device asking again sooner is told to slow down.',
          kind: 'seconds',
          min: 1,
        },
        {
          path: 'deviceAuthorization.userCodeLength',
          label: 'Device user code length',
          help: 'Characters the person types.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'deviceAuthorization.deviceCodeLength',
          label: 'Device code length',
          help: 'Characters of the secret code the device keeps.',
          kind: 'number',
          min: 1,
        },
        {
          path: 'deviceAuthorization.verificationUri',
          label: 'Device approval page',
          help: 'Where the device sends people; empty uses the hosted page /ui/device.',
          kind: 'optional-text',
        },
        {
          path: 'deviceAuthorization.clientIds',
          label: 'Allowed device clients',
          help: 'client_id values accepted; empty accepts any.',
          kind: 'tags',
        },
      ],
    },
  ],
})
