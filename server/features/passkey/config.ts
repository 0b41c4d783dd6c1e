import { z } from 'zod'

/**
 * `passkey.*`: @better-auth/passkey's options. `rpID` unset: the host name of the base URL (a LAN
 * name such as `gatehouse.lan` works: WebAuthn needs a secure context, i.e. https or localhost).
 * `origin` unset: the base URL's origin and the exact trusted origins.
 */
export const passkeyConfig = z
  .object({
    enabled: z.boolean().default(false),
    rpID: z.string().min(1).optional(),
    rpName: z.string().min(1).optional(),
    origin: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
  })
  .prefault({})

export type PasskeyConfig = z.output<typeof passkeyConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { passkey: passkeyConfig }
