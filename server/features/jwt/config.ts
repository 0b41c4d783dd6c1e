import { z } from 'zod'

/** `15m`, `1h`, `900s`, `7d` or a number of seconds. */
export const durationText = z.union([
  z.number().int().min(1),
  z
    .string()
    .regex(
      /^\d+\s*(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days|w|week|weeks)?$/i,
      'a duration like "15m", "1h" or "900s"',
    ),
])

export const JWT_ALGS = ['EdDSA', 'ES256', 'RS256'] as const

/**
 * `jwt.*`: the options of better-auth's jwt plugin, same names and defaults (EdDSA/Ed25519,
 * 15-minute tokens, iss/aud = the base URL's origin). Off by default; switchable live.
 * `jwks.gracePeriod` and `jwks.rotationInterval` are seconds, as upstream.
 */
export const jwtConfig = z
  .object({
    enabled: z.boolean().default(false),
    /** Do not send `set-auth-jwt` on get-session. */
    disableSettingJwtHeader: z.boolean().default(false),
    jwks: z
      .object({
        keyPairConfig: z
          .object({
            alg: z.enum(JWT_ALGS).default('EdDSA'),
            /** RS256 only; at least 2048 bits (SPEC §3 keypair). */
            modulusLength: z.number().int().min(2048).max(8192).default(2048),
          })
          .prefault({}),
        /** Rotate automatically when the signing key is this old (seconds); unset: only by hand. */
        rotationInterval: z.number().int().min(60).optional(),
        /** A retired key stays in the JWKS this long (seconds), then is removed. */
        gracePeriod: z.number().int().min(0).default(2_592_000),
        /** Seconds verifiers may cache the JWKS (Cache-Control max-age). */
        cacheMaxAge: z.number().int().min(0).default(300),
      })
      .prefault({}),
    jwt: z
      .object({
        /** Default: the base URL's origin. */
        issuer: z.string().min(1).optional(),
        /** Default: the base URL's origin. */
        audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
        expirationTime: durationText.default('15m'),
        /** Extra claims beyond the user's fields (which include `role`). */
        claims: z
          .object({
            /** `activeOrganizationId` and `organizationRole` of the session's active organization. */
            activeOrganization: z.boolean().default(false),
            /** `teams`: the ids of the user's teams in the active organization. */
            teams: z.boolean().default(false),
          })
          .prefault({}),
      })
      .prefault({}),
  })
  .prefault({})

export type JwtConfig = z.output<typeof jwtConfig>

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }

/** Seconds in a duration option. */
export function durationSeconds(value: number | string): number {
  if (typeof value === 'number') return value
  const match = /^(\d+)\s*([a-z]*)$/i.exec(value.trim())
  if (!match) throw new Error(`bad duration ${value}`)
  const unit = (match[2] ?? '').toLowerCase()
  const key = unit === '' ? 's' : unit.startsWith('mi') || unit === 'm' ? 'm' : (unit[0] as string)
  return Number(match[1]) * (UNIT_SECONDS[key] ?? 1)
}

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { jwt: jwtConfig }
