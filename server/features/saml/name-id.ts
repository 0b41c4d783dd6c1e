import type { AuthContext } from '../../core/context.js'
import { hmacBase64Url, purposeKey } from '../../crypto/sign.js'
import type { ServiceProvider } from './service-providers.js'

/**
 * The NameID a service provider gets for a person: the email (`email`, `unspecified`), the user id
 * (`persistent-shared`, the same at every SP), or a pairwise value (`persistent`): HMAC-SHA256 of the
 * user id and the SP's entityID under a key derived from the server secret, base64url (43
 * characters). It is stable for one person at one SP and unrelated between SPs, so two applications
 * cannot match their accounts by it; it changes with the server secret or the SP's entityID.
 */
export function pairwiseNameId(ctx: AuthContext, userId: string, spEntityId: string): string {
  return hmacBase64Url(purposeKey(ctx.secret, 'saml-pairwise-nameid'), `${userId}\u0000${spEntityId}`)
}

export function nameIdOf(
  ctx: AuthContext,
  sp: Pick<ServiceProvider, 'nameIdFormat' | 'entityId'>,
  user: { id: string; email: string },
): string {
  if (sp.nameIdFormat === 'persistent') return pairwiseNameId(ctx, user.id, sp.entityId)
  if (sp.nameIdFormat === 'persistent-shared') return user.id
  return user.email
}
