import { z } from 'zod'

/** `oneTimeToken.*`: better-auth's one-time-token plugin options. */
export const oneTimeTokenConfig = z
  .object({
    enabled: z.boolean().default(false),
    /** Minutes a token stays valid (better-auth's unit for this option; default 3). */
    expiresIn: z.number().int().min(1).default(3),
    /** Refuse GET /one-time-token/generate from clients (better-auth: server-side `auth.api` only). */
    disableClientRequest: z.boolean().default(false),
    /** POST /one-time-token/verify answers the session without setting its cookie. */
    disableSetSessionCookie: z.boolean().default(false),
    /** How the token is kept in the verification table: as given, or its SHA-256 (base64url). */
    storeToken: z.enum(['plain', 'hashed']).default('plain'),
  })
  .prefault({})

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { oneTimeToken: oneTimeTokenConfig }
