import { z } from 'zod'

/**
 * One rate-limit rule, better-auth's shape: at most `max` requests per `window` seconds from one
 * source (`rateLimit.strict`, each `rateLimit.customRules` entry, `ldap.rateLimit`).
 */
export const rateLimitRule = z.object({ window: z.number().int().min(1), max: z.number().int().min(1) })
