import { definePanelFeature } from '../panel-feature'

/** The magic-link feature in the control panel (renderer/src/features/panel-feature.ts). */
export const magicLinkPanel = definePanelFeature({
  name: 'magic-link',
  settings: [
    {
      section: 'sign-in',
      fields: [
        {
          path: 'magicLink.enabled',
          label: 'Magic links',
          help: 'People can ask for a sign-in link by email (better-auth magic link).',
          kind: 'switch',
        },
        {
          path: 'magicLink.expiresIn',
          label: 'Magic link lifetime',
          help: 'A link older than this is refused.',
          kind: 'seconds',
        },
        {
          path: 'magicLink.disableSignUp',
          label: 'No new accounts by magic link',
          help: 'A link to an unknown address creates no account.',
          kind: 'switch',
        },
        {
          path: 'magicLink.rateLimit.window',
          label: 'Magic link limit window',
          help: 'Seconds over which link requests are counted.',
          kind: 'seconds',
        },
        {
          path: 'magicLink.rateLimit.max',
          label: 'Magic link requests per window',
          help: 'Per client address.',
          kind: 'number',
          min: 1,
        },
      ],
    },
  ],
})
