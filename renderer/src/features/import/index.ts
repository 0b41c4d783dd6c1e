import { definePanelFeature } from '../panel-feature'

/** The import feature in the control panel (renderer/src/features/panel-feature.ts): its step is the Users view's Import dialog (ImportUsers.tsx). */
export const importPanel = definePanelFeature({
  name: 'import',
})
