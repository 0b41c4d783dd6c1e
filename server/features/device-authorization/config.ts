import { z } from 'zod'

const UNITS: Record<string, number> = { s: 1, sec: 1, m: 60, min: 60, h: 3600, hr: 3600, d: 86400, w: 604800 }

/**
 * A duration as better-auth's device authorization plugin takes it (`'30m'`, `'5s'`, `'1h'`), or a
 * number of seconds; read as whole seconds.
 */
const duration = z
  .union([
    z.number().int().min(1),
    z.string().regex(/^\s*\d+\s*(s|sec|m|min|h|hr|d|w)\s*$/i, "Use a number of seconds or a duration such as '30m', '5s' or '1h'"),
  ])
  .transform((value) => {
    if (typeof value === 'number') return value
    const [, amount = '0', unit = 's'] = /^\s*(\d+)\s*([a-z]+)\s*$/i.exec(value) ?? []
    return Number(amount) * (UNITS[unit.toLowerCase()] ?? 1)
  })
  .pipe(z.number().int().min(1))

/**
 * `deviceAuthorization.*`: better-auth's deviceAuthorization plugin options (RFC 8628).
 * `expiresIn` (30 minutes) and `interval` (5 s) in seconds or better-auth's duration strings;
 * `deviceCodeLength` (40) and `userCodeLength` (8) characters; `verificationUri` the page a person
 * opens to type the user code (default: the hosted page `{baseURL}/ui/device`, or better-auth's
 * `/device` on the base URL's origin while the hosted pages are off); `clientIds`: the config-file
 * form of better-auth's `validateClient` function (empty: every client_id is accepted, as
 * better-auth without validateClient).
 */
export const deviceAuthorizationConfig = z
  .object({
    enabled: z.boolean().default(false),
    expiresIn: duration.default(1800),
    interval: duration.default(5),
    deviceCodeLength: z.number().int().min(1).max(191).default(40),
    userCodeLength: z.number().int().min(1).max(191).default(8),
    verificationUri: z.string().min(1).optional(),
    clientIds: z.array(z.string().min(1)).default([]),
  })
  .prefault({})

export type DeviceAuthorizationConfig = z.output<typeof deviceAuthorizationConfig>

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { deviceAuthorization: deviceAuthorizationConfig }
