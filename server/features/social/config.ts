import { socialProvidersSchema } from './options.js'

/**
 * The social sign-in config sections, under better-auth's keys: `socialProviders.<id>` (the 18
 * providers, options.ts); `account.accountLinking` is the account feature's section. Imported by config/schema.ts under the
 * same keys; free of the engine's code.
 */
export const socialProvidersConfig = socialProvidersSchema

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { socialProviders: socialProvidersConfig }
