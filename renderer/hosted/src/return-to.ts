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

/**
 * A `returnTo` outside Gatehouse: an app behind forward auth (issue 28). The server answers whether
 * the URL is http(s), without credentials, on a host a `forwardAuth.rules` entry names; null for
 * anything else (or when forward auth is off), and the page shows its own "done" state instead.
 */
export async function forwardAuthReturnTo(value: string | null): Promise<{ url: string; app: string } | null> {
  if (!value || safeReturnTo(value)) return null
  try {
    const response = await fetch(`${basePath}/forward-auth/return-to?url=${encodeURIComponent(value)}`, {
      headers: { accept: 'application/json' },
    })
    if (!response.ok) return null
    const answer = (await response.json()) as { url: string | null; app: string | null }
    return answer.url && answer.app ? { url: answer.url, app: answer.app } : null
  } catch {
    return null
  }
}
