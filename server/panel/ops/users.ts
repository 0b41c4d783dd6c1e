/**
 * The user operations moved to server/features/admin (panel.ts, panel-contract.ts). Only this
 * re-export stays, for modules of other branches that still import PANEL_META from here; import it
 * from server/panel/op.ts instead (remove this file once nothing imports it).
 */
export { PANEL_META } from '../op.js'
