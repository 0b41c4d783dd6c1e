import { defineFeature } from '../../feature.js'
import { auditPanel } from './panel.js'
import { auditRoutes } from './routes.js'

/**
 * The audit log view and its export. The audit writer and its queries (auth/audit.ts) are core:
 * every capability records events through them. Its one route: the person's own recent events
 * (`GET /audit/own-events`, the hosted Activity page).
 */
export const auditFeature = defineFeature({ id: 'audit', panel: auditPanel, routes: auditRoutes })
