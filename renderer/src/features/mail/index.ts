import { IconMail } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The mail feature in the control panel (renderer/src/features/panel-feature.ts). */
export const mailPanel = definePanelFeature({
  name: 'mail',
  views: [{ name: 'email', label: 'Email', icon: IconMail, Page: lazy(() => import('./EmailPage')) }],
  settings: [
    {
      section: 'mail',
      fields: [
        {
          path: 'mail.appName',
          label: 'Application name',
          help: 'Named in the subject and text of every email.',
          kind: 'text',
        },
        {
          path: 'mail.from',
          label: 'Sender',
          help: 'The From address, e.g. Acme <no-reply@acme.example>.',
          kind: 'text',
        },
      ],
    },
  ],
  editedElsewhere: {
    'mail.smtp': 'the Email view (SMTP server, test email)',
    'mail.templates': "the Email view's Templates tab (subject and body per message)",
  },
})
