/**
 * The 18 built-in social providers' ids (SPEC §1), under better-auth's names. A leaf module: the
 * social feature runs them, and the generic-oauth feature refuses them as ids of its own providers
 * (the two features do not import each other).
 */
export const BUILT_IN_PROVIDER_IDS = [
  'apple',
  'discord',
  'facebook',
  'github',
  'microsoft',
  'google',
  'spotify',
  'twitch',
  'twitter',
  'dropbox',
  'kick',
  'linkedin',
  'gitlab',
  'tiktok',
  'reddit',
  'roblox',
  'vk',
  'zoom',
] as const
