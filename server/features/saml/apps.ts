import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { allServiceProviders } from './service-providers.js'
import { participantsOfSession } from './store.js'
import { inAllowedGroups } from '../groups/names.js'
import { personOf } from '../groups/person.js'

/** The service providers a person may sign in to (their allowed groups admit them), with the IdP-initiated link. */
export async function appsFor(ctx: AuthContext, user: UserRow): Promise<{ entityId: string; name: string; url: string }[]> {
  const { groups } = await personOf(ctx, user)
  return (await allServiceProviders(ctx))
    .filter((sp) => inAllowedGroups(sp.allowedGroups, groups))
    .map((sp) => ({ entityId: sp.entityId, name: sp.name, url: `${ctx.baseURL}/saml/idp-initiated?sp=${encodeURIComponent(sp.entityId)}` }))
}

/** How many SAML apps the session signed in to (the hosted sign-out page then signs out through /saml/logout). */
export async function sessionAppCount(ctx: AuthContext, sessionId: string): Promise<number> {
  return new Set((await participantsOfSession(ctx, sessionId)).map((p) => p.spEntityId)).size
}
