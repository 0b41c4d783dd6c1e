import { z } from 'zod'

/** `lastLoginMethod.*`: better-auth's last-login-method plugin options. */
export const lastLoginMethodConfig = z
  .object({
    enabled: z.boolean().default(false),
    /** The cookie's name, as is (no cookie prefix, no __Secure-), as better-auth names it. */
    cookieName: z
      .string()
      .regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, 'must be a cookie name')
      .default('better-auth.last_used_login_method'),
    /** Seconds the cookie lives (better-auth: 30 days; at most 400 days). */
    maxAge: z.number().int().min(0).max(34_560_000).default(2_592_000),
    /** Also keep the method in `user.lastLoginMethod`. */
    storeInDatabase: z.boolean().default(false),
  })
  .prefault({})

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { lastLoginMethod: lastLoginMethodConfig }
