import { IconDatabaseExport } from '@tabler/icons-react'
import { lazy } from 'react'
import { definePanelFeature } from '../panel-feature'

/** The backup feature in the control panel (renderer/src/features/panel-feature.ts). */
export const backupPanel = definePanelFeature({
  name: 'backup',
  views: [{ name: 'backup', label: 'Backups', icon: IconDatabaseExport, Page: lazy(() => import('./BackupPage')) }],
  editedElsewhere: {
    backup: 'the Backups view (schedule and retention)',
  },
})
