/** Device authorization's hosted page, at {basePath}/ui/<page>: approving a device's code (bin/gen-features.js gathers every feature's into server/features/hosted-page-list.ts). */
export const hostedPages = ['device'] as const
