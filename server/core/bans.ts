import { and, eq, gt, isNull, or, type SQL } from 'drizzle-orm'
import { user } from '../db/schema.js'

/**
 * "Is this person banned now?": the one rule every reader calls (sessions, API keys, forward auth,
 * OIDC, LDAP, SAML), and its SQL form for queries that count or filter people (the overview). A ban
 * counts until its expiry; a ban without expiry counts until lifted. tests/unit/one-copy.test.ts
 * fails on a second copy of this comparison anywhere in server/.
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

/** bannedNow as a query condition on the user table: banned, and no expiry or one still ahead of `now`. */
export function bannedNowWhere(now: number): SQL {
  return and(eq(user.banned, true), or(isNull(user.banExpires), gt(user.banExpires, new Date(now)))) as SQL
}
