/** The organizations' hosted page, at {basePath}/ui/<page>: the invitation's landing (bin/gen-features.js gathers every feature's into server/features/hosted-page-list.ts). */
export const hostedPages = ['accept-invitation'] as const
