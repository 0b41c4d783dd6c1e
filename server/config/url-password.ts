/**
 * A URL's password (`smtp://user:pass@host`, `postgres://gh:pass@db/gatehouse`): the other kind of
 * secret in a config (config/secret.ts), found in the value, not the field. Found and masked here
 * only: the config audit, the Settings view's copy of the config, the mail outbox, the engines'
 * messages and the import view all ask these two functions (tests/unit/one-copy.test.ts).
 */

/** scheme://user:password@host: the password part (URL parsers' reading: last "@", first ":"), or null. */
export function urlPassword(value: string): { masked: string; withoutPassword: string; password: string } | null {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i.exec(value)
  const colon = match?.[2]?.indexOf(':') ?? -1
  if (!match || colon < 0) return null
  const user = match[2]?.slice(0, colon)
  const rest = value.slice(match[0].length)
  return {
    masked: `${match[1]}${user}:***@${rest}`,
    withoutPassword: `${match[1]}${user}@${rest}`,
    password: match[2]?.slice(colon + 1) ?? '',
  }
}

/**
 * `value` with a URL's password replaced by `***` (scheme://user:***@host), for messages, logs and
 * the panel; anything else unchanged. A value no URL parser reads (a password holding an unencoded
 * `/`, `?` or `#`) still loses everything from the user's `:` to the next `@`.
 */
export function maskUrlPassword(value: string): string {
  const found = urlPassword(value)
  if (found) return found.masked
  if (URL.canParse(value)) return value
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*):[^@]*@/i, '$1:***@')
}
