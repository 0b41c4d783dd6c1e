import type { IncomingHttpHeaders } from 'node:http'

/**
 * Trusted-origin matching (SPEC §5 "Trusted origins", reference §6.2).
 *
 * A trusted entry is one of:
 *  - an http(s) origin, matched exactly against a URL's origin;
 *  - a pattern with `*` / `?`, matched against the URL's host[:port] (or, when the pattern has a
 *    scheme, against the whole origin);
 *  - a custom-scheme prefix such as `myapp://`, matched by prefix.
 */

/** A safe same-site relative path: no `//`, `\`, encoded slashes, fragments or control characters. */
const SAFE_RELATIVE = /^\/(?!\/|\\|%2f|%5c)[\w\-.+/@]*(?:\?[\w\-.+/=&%@]*)?$/i

function globToRegExp(glob: string): RegExp {
  const escaped = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '[^/\\\\]*')
    .replace(/\?/g, '[^/\\\\]')
  return new RegExp(`^${escaped}$`, 'i')
}

function parse(url: string): URL | null {
  try {
    return new URL(url)
  } catch {
    return null
  }
}

export function matchesTrustedEntry(url: URL, raw: string, entry: string): boolean {
  if (entry.includes('*') || entry.includes('?')) {
    if (entry.includes('://')) return globToRegExp(entry).test(url.origin)
    // A host-only pattern names web hosts: `javascript://x.example.org/%0Aalert(1)` has that
    // host too, and a client that follows the returned url would run it.
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
    return globToRegExp(entry).test(url.host)
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    const trusted = parse(entry)
    return trusted !== null && trusted.origin === url.origin
  }
  return raw.startsWith(entry)
}

export interface TrustCheckOptions {
  /** Relative paths are acceptable (callback URLs), or not (the Origin header). */
  allowRelative: boolean
}

export function isTrustedURL(candidate: string, trusted: readonly string[], options: TrustCheckOptions): boolean {
  if (candidate.startsWith('/')) return options.allowRelative && SAFE_RELATIVE.test(candidate)
  // Control characters and whitespace are never part of a legitimate absolute callback.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point
  if (/[\u0000-\u0020\u007f]/.test(candidate)) return false
  const url = parse(candidate)
  if (!url) return false
  // Credentials in a URL (https://trusted@evil) are a classic redirect trick.
  if (url.username || url.password) return false
  return trusted.some((entry) => matchesTrustedEntry(url, candidate, entry))
}

/** Validation of an entry before it enters the config: a clear reason, or null when valid. */
export function describeInvalidTrustedOrigin(entry: string): string | null {
  const value = entry.trim()
  if (!value) return 'a trusted origin must not be empty'
  if (value !== entry) return 'a trusted origin must not have surrounding spaces'
  if (value.includes('*') || value.includes('?')) return null
  if (/^https?:\/\//i.test(value)) {
    const url = parse(value)
    if (!url) return `"${entry}" is not a valid URL`
    if (url.pathname !== '/' || url.search || url.hash || url.username) {
      return `"${entry}" must be an origin only (scheme, host and port), like ${url.origin}`
    }
    return null
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(value)) return null
  return `"${entry}" must start with http://, https:// or an app scheme such as myapp://`
}

/**
 * The origin an Origin or Referer header names: null when absent, the string 'null' (which no
 * trusted origin equals) when it is no URL — a malformed header is refused, never an error.
 */
export function originOf(value: string | null | undefined): string | null {
  if (!value) return null
  try {
    return new URL(value).origin
  } catch {
    return 'null'
  }
}

/**
 * Where a browser says a request comes from: its Origin header, else the origin of its Referer
 * (originOf), else null. The one reading of the CSRF check, its audit entry and the OIDC consent
 * POSTs; takes a fetch Request's headers or a Node request's.
 */
export function requestOriginOf(headers: Pick<Headers, 'get'> | IncomingHttpHeaders): string | null {
  // A server's fetch Request may carry its own Headers class (srvx's, for a Node request): asked by shape.
  const header = (name: 'origin' | 'referer'): string | null | undefined =>
    typeof headers.get === 'function' ? (headers as Pick<Headers, 'get'>).get(name) : (headers as IncomingHttpHeaders)[name]
  return header('origin') ?? originOf(header('referer'))
}
