import { definePanelFeature } from '../panel-feature'

/** The hosted-pages feature in the control panel (renderer/src/features/panel-feature.ts). */
export const hostedPagesPanel = definePanelFeature({
  name: 'hosted-pages',
  settings: [
    {
      section: 'application',
      fields: [
        {
          path: 'hostedPages.enabled',
          label: 'Hosted sign-in pages',
          help: 'Serve the sign-in, sign-up, password reset, consent and sign-out pages under {base path}/ui/.',
          kind: 'switch',
        },
        {
          path: 'hostedPages.logo',
          label: 'Logo on the pages',
          help: 'An https:// address of an image, or a path on this server; empty shows the name only.',
          kind: 'optional-text',
        },
        {
          path: 'hostedPages.color',
          label: 'Colour of the pages',
          help: 'Buttons and links, as #rrggbb; button text turns black or white to stay readable.',
          kind: 'text',
        },
      ],
    },
  ],
})
