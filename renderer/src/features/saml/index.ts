import { IconLicense } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The SAML identity provider in the control panel (renderer/src/features/panel-feature.ts). */
export const samlPanel = definePanelFeature({
  name: 'saml',
  views: [{ name: 'saml-apps', label: 'SAML apps', icon: IconLicense, Page: lazy(() => import('./SamlApps')) }],
  settings: [
    {
      section: 'sign-in',
      fields: [
        {
          path: 'saml.enabled',
          label: 'SAML identity provider',
          help: 'Applications that speak only SAML 2.0 sign in through Gatehouse (metadata at /saml/metadata).',
          kind: 'switch',
        },
        {
          path: 'saml.keyRolloverDays',
          label: 'SAML key rollover (days)',
          help: 'A signing key made by `gatehouse saml cert rotate` is published at once and signs after this many days (or at `cert rotate --activate`), so service providers take it from the metadata first.',
          kind: 'number',
          min: 0,
        },
      ],
    },
  ],
  editedElsewhere: {
    'saml.serviceProviders': 'the config file (read-only; the SAML apps view lists them and adds its own)',
  },
})
