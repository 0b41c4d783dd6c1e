import { z } from 'zod'

/**
 * `bearer.*`: better-auth's bearer plugin options. On by default: Gatehouse accepted bearer
 * tokens before the switch existed, and apps rely on it.
 */
export const bearerConfig = z
  .object({
    enabled: z.boolean().default(true),
    /** Accept only the signed token (`<token>.<signature>`, as `set-auth-token` hands it out), not the bare session token. */
    requireSignature: z.boolean().default(false),
  })
  .prefault({})

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { bearer: bearerConfig }
