import { defineFeature } from '../../feature.js'
import { mailPanel } from './panel.js'

/**
 * Mail: the control panel's Email view (SMTP settings, template previews, the outbox). Delivery
 * itself (server/mail/outbox.ts) is core: every feature sends through `ctx.mailer`.
 */
export const mailFeature = defineFeature({
  id: 'mail',
  panel: mailPanel,
})
