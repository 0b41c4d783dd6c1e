/** The hosted pages of the email-and-password flows, at {basePath}/ui/<page> (bin/gen-features.js gathers every feature's into server/features/hosted-page-list.ts). */
export const hostedPages = ['sign-up', 'forgot-password', 'reset-password', 'verify-email'] as const
