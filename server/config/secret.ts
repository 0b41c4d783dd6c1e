import { z } from 'zod'

/**
 * The one rule for "is this config field a secret": a field is a secret when its schema says so,
 * `clientSecret: secret(z.string()).optional()`. Everything that must keep secrets to itself (the
 * config audit and its export, the Settings view's copy of the config, the fields Settings refuses
 * to write) asks `config/secret-paths.ts`, which reads these marks off the config schema; nothing
 * guesses from a key's name.
 *
 * A URL's password (`smtp://user:pass@host`) is the other kind of secret in a config: it is found
 * in the value, not the field (config/url-password.ts `urlPassword`).
 */
export const secretFields = z.registry<{ secret: true }>()

/** Marks a config field as a secret (its value, plain or sealed, never reaches an audit entry, a log line or the renderer). */
export function secret<T extends z.ZodType>(schema: T): T {
  secretFields.add(schema, { secret: true })
  return schema
}
