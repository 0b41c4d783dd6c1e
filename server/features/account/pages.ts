/** The account center's hosted pages, at {basePath}/ui/<page> (bin/gen-features.js gathers every feature's into server/features/hosted-page-list.ts). */
export const hostedPages = [
  'account',
  'account/profile',
  'account/password',
  'account/sessions',
  'account/linked',
  'account/activity',
  'account/delete',
  'account/apps',
] as const
