import { definePanelFeature } from '../panel-feature'

/** The anonymous feature in the control panel (renderer/src/features/panel-feature.ts); the Users list marks and filters anonymous users. */
export const anonymousPanel = definePanelFeature({
  name: 'anonymous',
  settings: [
    {
      section: 'sign-in',
      fields: [
        {
          path: 'anonymous.enabled',
          label: 'Anonymous users',
          help: 'Apps can sign visitors in without an account; signing up later replaces the anonymous user.',
          kind: 'switch',
        },
        {
          path: 'anonymous.emailDomainName',
          label: 'Anonymous address domain',
          help: 'Empty: addresses at anonymous.placeholder.invalid.',
          kind: 'optional-text',
        },
        {
          path: 'anonymous.disableDeleteAnonymousUser',
          label: 'Keep anonymous users',
          help: 'Not deleted when their owner signs up or in, nor by the app.',
          kind: 'switch',
        },
      ],
    },
  ],
})
