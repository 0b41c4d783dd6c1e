/** The Email view's refusals, spelled here only (a template's own problems: server/mail/custom-templates.ts). */
export const mailErrors = {
  TEMPLATE_NOT_FOUND: { code: 'TEMPLATE_NOT_FOUND', message: 'No such message' },
  INVALID_TEMPLATE: { code: 'INVALID_TEMPLATE', message: 'The template is not valid' },
  SMTP_FAILED: { code: 'SMTP_FAILED', message: 'Delivery failed' },
  SET_AT_STARTUP: {
    code: 'SET_AT_STARTUP',
    message:
      'The SMTP settings were set at start-up (--smtp-url, --config or the environment), which win over the panel: change them where the server is started',
  },
} as const
