import { definePanelFeature } from '../panel-feature'

/** The passkey feature in the control panel (renderer/src/features/panel-feature.ts). */
export const passkeyPanel = definePanelFeature({
  name: 'passkey',
  settings: [
    {
      section: 'multi-factor',
      fields: [
        {
          path: 'passkey.enabled',
          label: 'Allow passkeys',
          help: 'Users can register passkeys and sign in without a password.',
          kind: 'switch',
        },
        {
          path: 'passkey.rpID',
          label: 'Passkey domain',
          help: 'The host name passkeys are bound to; empty uses the base URL’s host.',
          kind: 'optional-text',
        },
        {
          path: 'passkey.rpName',
          label: 'Name shown when registering',
          help: 'Shown by the browser or phone; empty uses the mail app name.',
          kind: 'optional-text',
        },
        {
          path: 'passkey.origin',
          label: 'Pages allowed to use passkeys',
          help: 'Origins of the sign-in pages; empty uses the base URL and the trusted origins.',
          kind: 'tags',
        },
      ],
    },
  ],
})
