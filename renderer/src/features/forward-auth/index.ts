import { IconShieldLock } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The forward-auth feature in the control panel (renderer/src/features/panel-feature.ts). */
export const forwardAuthPanel = definePanelFeature({
  name: 'forward-auth',
  views: [{ name: 'protected-apps', label: 'Protected apps', icon: IconShieldLock, Page: lazy(() => import('./ProtectedApps')) }],
  editedElsewhere: {
    forwardAuth: 'the Protected apps view (rules, default policy, proxy snippets)',
  },
})
