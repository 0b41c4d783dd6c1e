/** The hosted pages every face shares, at {basePath}/ui/<page>: sign-in, sign-out and the error page (bin/gen-features.js gathers every feature's into server/features/hosted-page-list.ts). */
export const hostedPages = ['sign-in', 'sign-out', 'error'] as const
