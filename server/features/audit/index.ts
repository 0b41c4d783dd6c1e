import { defineFeature } from '../../feature.js'
import { auditPanel } from './panel.js'

/**
 * The audit log view and its export. The audit writer and its queries (auth/audit.ts) are core:
 * every capability records events through them.
 */
export const auditFeature = defineFeature({ id: 'audit', panel: auditPanel })
