import { defineFeature } from '../../feature.js'
import { overviewPanel } from './panel.js'

/** The panel's overview: counts and activity (auth/overview.ts, core) and the first-run checklist. */
export const overviewFeature = defineFeature({ id: 'overview', panel: overviewPanel })
