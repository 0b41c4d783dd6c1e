import { z } from 'zod'

/**
 * `apiKey.*`: the options of @better-auth/api-key (one configuration), same names and defaults.
 * Off by default; switchable live. Durations follow the plugin: `rateLimit.timeWindow` in
 * milliseconds, `keyExpiration.defaultExpiresIn` in seconds, `min/maxExpiresIn` in days.
 */
export const apiKeyConfig = z
  .object({
    enabled: z.boolean().default(false),
    /** A valid key in the header acts as its owner's session on protected endpoints. */
    enableSessionForAPIKeys: z.boolean().default(false),
    /** Header(s) a key is read from. */
    apiKeyHeaders: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).default('x-api-key'),
    defaultKeyLength: z.number().int().min(16).max(256).default(64),
    defaultPrefix: z
      .string()
      .regex(/^[a-zA-Z0-9_-]+$/)
      .optional(),
    maximumPrefixLength: z.number().int().min(0).default(32),
    minimumPrefixLength: z.number().int().min(0).default(1),
    maximumNameLength: z.number().int().min(0).default(32),
    minimumNameLength: z.number().int().min(0).default(1),
    requireName: z.boolean().default(false),
    enableMetadata: z.boolean().default(false),
    /** Who owns keys: users, or organizations (`organizationId` on create; owners manage them). */
    references: z.enum(['user', 'organization']).default('user'),
    startingCharactersConfig: z
      .object({
        shouldStore: z.boolean().default(true),
        charactersLength: z.number().int().min(0).max(64).default(6),
      })
      .prefault({}),
    rateLimit: z
      .object({
        enabled: z.boolean().default(true),
        timeWindow: z.number().int().min(1).default(86_400_000),
        maxRequests: z.number().int().min(1).default(10),
      })
      .prefault({}),
    keyExpiration: z
      .object({
        defaultExpiresIn: z.number().int().min(1).nullable().default(null),
        disableCustomExpiresTime: z.boolean().default(false),
        maxExpiresIn: z.number().min(0).default(365),
        minExpiresIn: z.number().min(0).default(1),
      })
      .prefault({}),
  })
  .prefault({})

export type ApiKeyConfig = z.output<typeof apiKeyConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { apiKey: apiKeyConfig }
