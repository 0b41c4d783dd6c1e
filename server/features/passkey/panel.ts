import type { PanelEnv } from '../../panel-frame/env.js'

/** The passkey panel operations (`passkey.remove`) are served with two-factor's (features/two-factor/panel.ts): one view of a user's factors. */
export const passkeyPanel = (_env: PanelEnv) => ({})
