/** The passkeys' hosted page in the account center, at {basePath}/ui/<page> (bin/gen-features.js gathers every feature's into server/features/hosted-page-list.ts). */
export const hostedPages = ['account/passkeys'] as const
