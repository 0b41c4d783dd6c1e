import { defineFeature } from '../../feature.js'
import { mailErrors } from './errors.js'
import { mailPanel } from './panel.js'

/**
 * Mail: the control panel's Email view (SMTP settings, template previews and edits, the outbox).
 * Delivery itself (server/mail/outbox.ts) is core: every feature sends through `ctx.mailer`, which
 * applies the templates edited here (server/mail/custom-templates.ts).
 */
export const mailFeature = defineFeature({
  id: 'mail',
  errors: mailErrors,
  panel: mailPanel,
})
