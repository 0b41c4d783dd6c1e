import { parseRoleList } from '../../core/access-control.js'
import { bannedNow } from '../../core/bans.js'
import type { AuthContext } from '../../core/context.js'
import { ChangeGuardedCache } from '../../core/session-cache.js'
import type { UserRow } from '../../core/sessions.js'
import { loginNameOf } from '../username/rules.js'
import { type GroupSources, groupNames, groupSourcesOf, groupsRule, teamGroupName } from './names.js'

/**
 * Who a person is to every face, in one record: the login name (forward auth's `Remote-User`,
 * LDAP's and SAML's `uid`, OIDC's `preferred_username`), the address and whether it is verified,
 * whether a ban holds now, and the group names (`groups.*`: OIDC's `groups` claim, SAML's
 * `groups` attribute, `Remote-Groups`, LDAP's memberOf) with the parts forward-auth rules ask
 * about (roles, organizations, teams). Each face formats its own wire shape from this record and
 * from nothing else, so two faces cannot tell two different stories of one person.
 */
export interface PersonBasics {
  id: string
  loginName: string
  email: string
  name: string
  verified: boolean
  bannedNow: boolean
}

export interface Person extends PersonBasics {
  /** The group names `groups.*` lists, in its stable order. */
  groups: string[]
  /** The person's roles, as stored. */
  roles: string[]
  /** The slugs of the organizations they are a member of. */
  organizations: string[]
  /** Their teams' group names (`acme/release-ops`), whatever `groups.teams` says. */
  teams: string[]
}

/** Every source a face may ask about (organizations and teams), whatever `groups.*` lists. */
const ALL_SOURCES = { roles: true, organizations: true, memberRoles: true, teams: true }

/**
 * The membership part of a person, per user id, kept while the database has not changed at all
 * (core/session-cache.ts: any write by any process empties it; on PostgreSQL after the change
 * signal's sync): two queries at most once per change, not at every token, assertion or request.
 */
const memberships = new WeakMap<AuthContext, ChangeGuardedCache<GroupSources>>()

function cacheOf(ctx: AuthContext): ChangeGuardedCache<GroupSources> {
  let cache = memberships.get(ctx)
  if (!cache) {
    cache = new ChangeGuardedCache<GroupSources>(ctx.storage.changeSignal({ ownWrites: true }), 10_000)
    memberships.set(ctx, cache)
  }
  return cache
}

async function sourcesOf(ctx: AuthContext, user: UserRow): Promise<GroupSources> {
  const cache = cacheOf(ctx)
  await cache.sync?.()
  const kept = cache.get(user.id)
  // The role is the row's own (the caller's row is as fresh as its caller needs); memberships are kept.
  if (kept) return { ...kept, role: user.role ?? null }
  const mark = cache.mark()
  const read = await groupSourcesOf(ctx, { id: user.id, role: user.role ?? null }, ALL_SOURCES)
  cache.set(user.id, read, mark)
  return read
}

/** The part of a person read off their row alone (no query): what a face needs when it releases no groups. */
export function basicsOf(ctx: AuthContext, user: UserRow): PersonBasics {
  return {
    id: user.id,
    loginName: loginNameOf(user),
    email: user.email,
    name: user.name,
    verified: user.emailVerified,
    bannedNow: bannedNow(user, ctx.clock.now()),
  }
}

/** The one record of who `user` is, for every face (see Person). */
export async function personOf(ctx: AuthContext, user: UserRow): Promise<Person> {
  const sources = await sourcesOf(ctx, user)
  return {
    ...basicsOf(ctx, user),
    groups: groupNames(sources, groupsRule(ctx.config())),
    roles: parseRoleList(sources.role),
    organizations: sources.memberships.map((m) => m.slug),
    teams: sources.teams.flatMap((t) => teamGroupName(t.slug, t.teamName) ?? []),
  }
}
