/**
 * "Is this person banned now?": the one rule every reader calls (sessions, API keys, forward auth,
 * OIDC, LDAP, SAML). A ban counts until its expiry; a ban without expiry counts until lifted.
 * tests/unit/ban-rule.test.ts fails on a second copy of this comparison anywhere in server/.
 */
export interface BanFields {
  banned: boolean | null
  banExpires: Date | null
}

export function bannedNow(user: BanFields, now: number): boolean {
  if (!user.banned) return false
  return !user.banExpires || user.banExpires.getTime() > now
}

/** A ban that is set but whose expiry has passed (SPEC §4 Ban: cleared at the next session creation). */
export function banLapsed(user: BanFields, now: number): boolean {
  return !!user.banned && !bannedNow(user, now)
}
