import { IconCertificate } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The jwt feature in the control panel (renderer/src/features/panel-feature.ts). */
export const jwtPanel = definePanelFeature({
  name: 'jwt',
  views: [{ name: 'signing-keys', label: 'Signing keys', icon: IconCertificate, Page: lazy(() => import('./SigningKeys')) }],
  editedElsewhere: {
    jwt: 'the Signing keys view',
  },
})
