/** Two-factor's hosted page in the account center, at {basePath}/ui/<page>: set-up, codes, enrolment step (bin/gen-features.js gathers every feature's into server/features/hosted-page-list.ts). */
export const hostedPages = ['account/two-factor'] as const
