import { IconListDetails } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The audit feature in the control panel (renderer/src/features/panel-feature.ts). */
export const auditPanel = definePanelFeature({
  name: 'audit',
  views: [{ name: 'audit', label: 'Audit log', icon: IconListDetails, Page: lazy(() => import('./AuditPage')) }],
})
