/** The OIDC provider's hosted page, at {basePath}/ui/<page>: the consent to an application (bin/gen-features.js gathers every feature's into server/features/hosted-page-list.ts). */
export const hostedPages = ['consent'] as const
