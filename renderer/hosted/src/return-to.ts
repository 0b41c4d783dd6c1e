import { basePath } from './api'

/**
 * The `returnTo` of a page, accepted only when it is a URL of this origin under the base path
 * (the OIDC interaction, another hosted page, or an endpoint of this server): anything else
 * (another origin, a scheme-relative or backslash trick, a path outside the base path,
 * javascript:) gives null, and the page shows its own "done" state instead.
 */
export function safeReturnTo(value: string | null | undefined): string | null {
  if (!value) return null
  let url: URL
  try {
    url = new URL(value, location.href)
  } catch {
    return null
  }
  if (url.origin !== location.origin) return null
  if (url.username || url.password) return null
  if (!url.pathname.startsWith(`${basePath}/`)) return null
  return url.href
}

export const returnToParam = (): string | null => safeReturnTo(new URLSearchParams(location.search).get('returnTo'))
