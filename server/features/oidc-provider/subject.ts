import { createHmac } from 'node:crypto'

/**
 * Pairwise subject identifiers (OpenID Connect Core §8.1): a client with `subject_type: pairwise`
 * gets, for a person, an HMAC-SHA256 of the person's id and the client's sector under the server
 * secret: the same at every client of one sector, different at any other, and not the user id any
 * app could correlate. oidc-provider asks it (`pairwiseIdentifier`) wherever a `sub` leaves: ID
 * tokens (also the fast token path's, token-fast.ts), userinfo, introspection and logout tokens.
 */

/** What oidc-provider's Client knows of its sector. */
export interface SectorSource {
  /** The host of `sector_identifier_uri`, else of the first redirect URI (oidc-provider's). */
  sectorIdentifier?: string
  redirectUris?: readonly string[]
}

/**
 * The client's sector: the host oidc-provider works out; for a native app whose redirect URI is a
 * private-use scheme (no host: `com.example.app:/callback`) the scheme, a reverse-DNS name it owns.
 */
export function sectorOf(client: SectorSource): string {
  if (client.sectorIdentifier) return client.sectorIdentifier.toLowerCase()
  const first = client.redirectUris?.[0]
  if (!first) return ''
  try {
    const url = new URL(first)
    return url.host.toLowerCase() || url.protocol.slice(0, -1).toLowerCase()
  } catch {
    return ''
  }
}

/** base64url(HMAC-SHA256(secret, "gatehouse pairwise sub\0" + sector + "\0" + userId)). */
export function pairwiseSubject(secret: string, sector: string, userId: string): string {
  return createHmac('sha256', secret).update(`gatehouse pairwise sub\0${sector}\0${userId}`).digest('base64url')
}
