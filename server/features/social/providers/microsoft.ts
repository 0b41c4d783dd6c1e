import { defineProvider, str } from '../types.js'

const base = (tenant: string) => `https://login.microsoftonline.com/${tenant}/oauth2/v2.0`

const listed = (claim: unknown, email: string): boolean => {
  const values = Array.isArray(claim) ? claim : typeof claim === 'string' ? [claim] : []
  return values.some((v) => typeof v === 'string' && v.toLowerCase() === email.toLowerCase())
}

/**
 * Whether Entra vouches for the token's email, from its documented optional claims: an explicit
 * `email_verified` decides; otherwise the address must be among `verified_primary_email` (sourced
 * from the user's PrimaryAuthoritativeEmail) or `verified_secondary_email` (as better-auth 1.7
 * reads them), or `xms_edov` (the email domain is verified by the tenant) must be true.
 */
export function microsoftEmailVerified(c: Record<string, unknown>): boolean {
  const email = str(c.email)
  if (c.email_verified !== undefined && c.email_verified !== null) return c.email_verified === true || c.email_verified === 'true'
  if (!email) return false
  if (listed(c.verified_primary_email, email) || listed(c.verified_secondary_email, email)) return true
  return c.xms_edov === true || c.xms_edov === 'true' || c.xms_edov === 1 || c.xms_edov === '1'
}

/**
 * Microsoft Entra ID: profile from the ID token, photo fetched with the bearer token
 * (SPEC §9: 48 px by default). The email counts as verified only when the token says so
 * (microsoftEmailVerified): Entra does not verify the email claim of every tenant.
 */
export const microsoft = defineProvider({
  id: 'microsoft',
  name: 'Microsoft EntraID',
  endpoints: (o) => ({
    authorization: `${base(o.tenantId)}/authorize`,
    token: `${base(o.tenantId)}/token`,
    photo: `https://graph.microsoft.com/v1.0/me/photos/${o.profilePhotoSize}x${o.profilePhotoSize}/$value`,
  }),
  scopes: ['openid', 'profile', 'email', 'User.Read', 'offline_access'],
  pkce: true,
  tokenAuth: 'post',
  authorizationParams: (_o, r) => ({ login_hint: r.loginHint }),
  refreshParams: (scopes) => ({ scope: scopes.join(' ') }),
  getUserInfo: async (pc) => {
    const c = pc.idTokenClaims()
    const id = c ? str(c.sub) : null
    if (!c || !id) return null
    let image: string | null = null
    if (!pc.options.disableProfilePhoto) {
      const bytes = await pc.fetchBytes(pc.endpoints.photo).catch(() => null)
      if (bytes && bytes.length > 0) image = `data:image/jpeg;base64,${bytes.toString('base64')}`
    }
    return {
      user: { id, name: str(c.name) ?? '', email: str(c.email), image, emailVerified: microsoftEmailVerified(c) },
      data: c,
    }
  },
  refresh: true,
})
