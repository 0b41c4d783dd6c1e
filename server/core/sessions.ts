import { and, asc, eq, gt, inArray, isNull, ne } from 'drizzle-orm'
import { generateId } from '../crypto/random.js'
import type { DB } from '../db/index.js'
import { firstRow } from '../db/storage.js'
import { session, user } from '../db/schema.js'
import { banLapsed } from './bans.js'
import { recordAudit } from './audit.js'
import { ChangeGuardedCache } from './session-cache.js'
import { sessionsEnded } from './session-ends.js'
import { credentialsRevoked } from './credential-revocation.js'
import type { AuthContext, RequestMeta } from './context.js'
import { type FeatureSessionColumns, featureSessionDefaults } from './session-defaults.js'
import { APIError, fail } from './errors.js'

export type SessionRow = typeof session.$inferSelect
export type UserRow = typeof user.$inferSelect
export interface SessionWithUser {
  session: SessionRow
  user: UserRow
}

const DAY_MS = 86_400_000

const sessionCaches = new WeakMap<DB, ChangeGuardedCache<SessionWithUser>>()

function sessionCache(ctx: AuthContext): ChangeGuardedCache<SessionWithUser> {
  let cache = sessionCaches.get(ctx.db)
  if (!cache) {
    cache = new ChangeGuardedCache(ctx.storage.changeSignal({ ownWrites: true }))
    sessionCaches.set(ctx.db, cache)
  }
  return cache
}

/** How long a session may sit in the shared cache (seconds); never past its expiry. */
const SHARED_SESSION_TTL_SECONDS = 300

/**
 * The session and its user for a token. Answers from a cache that any database write empties
 * (server/core/session-cache.ts); the objects returned are shared and must not be mutated. A cache
 * hit awaits no query on SQLite (the hot path of every authenticated request); on PostgreSQL it
 * awaits the change signal's sync, so a revocation committed on another instance is never missed.
 * On PostgreSQL with Redis, a miss asks the shared cache next (one Redis round trip), so a session
 * one instance looked up is not joined again by the others while nothing changed.
 */
export async function findSessionByToken(ctx: AuthContext, token: string): Promise<SessionWithUser | null> {
  const cache = sessionCache(ctx)
  if (cache.sync) await cache.sync()
  const cached = cache.get(token)
  ctx.events.sessionCache(cached !== undefined)
  if (cached) return cached
  const mark = cache.mark()
  const shared = cache.sync ? ctx.sharedCaches?.namespace<SessionWithUser>('session') : undefined
  const { hit, epoch } = shared ? await shared.lookup(token) : { hit: undefined, epoch: null }
  if (hit) {
    cache.set(token, hit, mark)
    return hit
  }
  const found =
    (await firstRow(
      ctx.db.select({ session, user }).from(session).innerJoin(user, eq(session.userId, user.id)).where(eq(session.token, token)),
    )) ?? null
  if (found) {
    cache.set(token, found, mark)
    if (shared && epoch !== null) {
      const ttl = Math.min(SHARED_SESSION_TTL_SECONDS, (found.session.expiresAt.getTime() - ctx.clock.now()) / 1000)
      shared.store(token, found, epoch, ttl)
    }
  }
  return found
}

export interface CreateSessionOptions {
  rememberMe?: boolean
  meta: RequestMeta
  /** Overrides the configured lifetime (seconds), e.g. for impersonation sessions. */
  expiresIn?: number
  /**
   * The features' columns this session starts with (admin's `impersonatedBy`, organization's
   * `activeOrganizationId`); the others hold their feature's default (`featureSessionDefaults`).
   */
  columns?: Partial<FeatureSessionColumns>
}

/**
 * Throws BANNED_USER if the user is banned; clears a ban whose expiry has passed (SPEC §4 Ban:
 * "An expired ban is cleared at the next session creation").
 */
export async function assertNotBanned(ctx: AuthContext, target: UserRow): Promise<UserRow> {
  if (!target.banned) return target
  const now = ctx.clock.now()
  if (banLapsed(target, now)) {
    const cleared = { banned: false, banReason: null, banExpires: null, updatedAt: new Date(now) }
    await ctx.db.update(user).set(cleared).where(eq(user.id, target.id))
    return { ...target, ...cleared }
  }
  throw new APIError(403, 'BANNED_USER', ctx.config().admin.bannedUserMessage)
}

/**
 * A session row that is never stored (api-key's stand-in for a key's requests): the core columns
 * given, each feature column at its feature's default, so a new session column is never spelled here.
 */
export function standInSession(columns: Omit<SessionRow, keyof FeatureSessionColumns>): SessionRow {
  return { ...featureSessionDefaults(), ...columns }
}

/** Creates a session for a user; every way of signing in goes through here. */
export async function createSession(ctx: AuthContext, target: UserRow, options: CreateSessionOptions): Promise<SessionWithUser> {
  const current = await assertNotBanned(ctx, target)
  const now = ctx.clock.now()
  const { session: conf, advanced } = ctx.config()
  const lifetimeMs =
    options.expiresIn !== undefined ? options.expiresIn * 1000 : options.rememberMe === false ? DAY_MS : conf.expiresIn * 1000
  const tracking = !advanced.ipAddress.disableIpTracking
  const row: SessionRow = {
    id: generateId(),
    token: generateId(32),
    userId: current.id,
    expiresAt: new Date(now + lifetimeMs),
    ipAddress: tracking ? (options.meta.ipAddress ?? '') : '',
    userAgent: options.meta.userAgent ?? '',
    createdAt: new Date(now),
    updatedAt: new Date(now),
    ...featureSessionDefaults(),
    ...options.columns,
  }
  await ctx.db.insert(session).values(row)
  return { session: row, user: current }
}

export type ResolvedSession =
  | { status: 'none' }
  | { status: 'expired'; userId: string }
  | {
      status: 'active'
      data: SessionWithUser
      refreshed: boolean
      /**
       * Set on a session-cache hit (resolveCachedSession): whether the same lookup would find this
       * very session, still active and not due a refresh, now. get-session replays its answer while
       * it holds (server/http/app.ts, "Replays").
       */
      still?: () => boolean
    }

/**
 * Looks a session token up and applies the lifecycle of SPEC §4: an expired session is deleted;
 * a session whose last refresh is at least `updateAge` old gets its expiry extended (unless
 * refresh is off for this request or in the config).
 */
export async function resolveSession(ctx: AuthContext, token: string, options: { allowRefresh: boolean }): Promise<ResolvedSession> {
  const found = await findSessionByToken(ctx, token)
  if (!found) return NO_SESSION
  const state = sessionState(ctx, found, options)
  if (state === 'expired') {
    await ctx.db.delete(session).where(eq(session.id, found.session.id))
    await sessionsEnded(ctx, [found.session.id])
    return { status: 'expired', userId: found.user.id }
  }
  if (state === 'active') return { status: 'active', data: found, refreshed: false }
  const now = ctx.clock.now()
  const patch = { expiresAt: new Date(now + ctx.config().session.expiresIn * 1000), updatedAt: new Date(now) }
  await ctx.db.update(session).set(patch).where(eq(session.id, found.session.id))
  return { status: 'active', data: { session: { ...found.session, ...patch }, user: found.user }, refreshed: true }
}

const NO_SESSION: ResolvedSession = Object.freeze({ status: 'none' })

/**
 * resolveSession's answer when it needs no I/O at all: a session-cache hit that is active and not
 * due a refresh, on an engine whose cache needs no barrier (SQLite). Undefined otherwise (a miss,
 * PostgreSQL, an expired session, a refresh due): call resolveSession. The same rules, without a
 * promise: get-session on a cache hit then awaits nothing.
 */
export function resolveCachedSession(ctx: AuthContext, token: string, options: { allowRefresh: boolean }): ResolvedSession | undefined {
  const cache = sessionCache(ctx)
  if (cache.sync) return undefined
  const found = cache.get(token)
  if (!found || sessionState(ctx, found, options) !== 'active') return undefined
  // A miss is counted by findSessionByToken, which the caller asks next.
  ctx.events.sessionCache(true)
  return {
    status: 'active',
    data: found,
    refreshed: false,
    // The cache empties on any change to the database, so finding the same object means nothing changed.
    still: () => cache.get(token) === found && sessionState(ctx, found, options) === 'active',
  }
}

/** The lifecycle of SPEC §4 for a found session: still active as it is, expired, or due a refresh. */
function sessionState(ctx: AuthContext, found: SessionWithUser, options: { allowRefresh: boolean }): 'active' | 'expired' | 'refresh' {
  const now = ctx.clock.now()
  if (found.session.expiresAt.getTime() <= now) return 'expired'
  const conf = ctx.config().session
  // An impersonation session keeps its short, fixed lifetime (SPEC §9: 3600 s).
  if (!options.allowRefresh || conf.disableSessionRefresh || found.session.impersonatedBy) return 'active'
  const lastRefresh = found.session.expiresAt.getTime() - conf.expiresIn * 1000
  return lastRefresh + conf.updateAge * 1000 > now ? 'active' : 'refresh'
}

/** SPEC §5 Freshness: created within `session.freshAge` seconds; 0 disables the check. */
export function isSessionFresh(ctx: AuthContext, row: SessionRow): boolean {
  const freshAge = ctx.config().session.freshAge
  if (freshAge === 0) return true
  return ctx.clock.now() - row.createdAt.getTime() < freshAge * 1000
}

/** Unexpired sessions of a user, impersonation sessions hidden (SPEC §6). */
export async function listUserSessions(ctx: AuthContext, userId: string): Promise<SessionRow[]> {
  return ctx.db
    .select()
    .from(session)
    .where(and(eq(session.userId, userId), gt(session.expiresAt, new Date(ctx.clock.now())), isNull(session.impersonatedBy)))
}

/** One of a user's sessions by its id (the control panel names sessions by id, never by token). */
export async function findUserSessionById(ctx: AuthContext, userId: string, sessionId: string): Promise<SessionRow | undefined> {
  return firstRow(
    ctx.db
      .select()
      .from(session)
      .where(and(eq(session.id, sessionId), eq(session.userId, userId))),
  )
}

export async function deleteSession(ctx: AuthContext, token: string): Promise<void> {
  const ended = await ctx.db.delete(session).where(eq(session.token, token)).returning({ id: session.id })
  await sessionsEnded(
    ctx,
    ended.map((row) => row.id),
  )
}

export async function signOut(ctx: AuthContext, current: SessionWithUser, meta: RequestMeta): Promise<void> {
  await deleteSession(ctx, current.session.token)
  await recordAudit(ctx, { type: 'user.sign-out', actorUserId: current.user.id, target: current.session.id, meta })
}

/** Revokes one of the caller's own sessions by token. Another user's token is UNAUTHORIZED. */
export async function revokeOwnSession(ctx: AuthContext, userId: string, token: string, meta: RequestMeta): Promise<void> {
  const found = await firstRow(ctx.db.select().from(session).where(eq(session.token, token)))
  if (!found) throw fail(400, 'SESSION_NOT_FOUND')
  if (found.userId !== userId) throw fail(401, 'UNAUTHORIZED')
  await ctx.db.delete(session).where(eq(session.id, found.id))
  await sessionsEnded(ctx, [found.id])
  await recordAudit(ctx, { type: 'session.revoked', actorUserId: userId, target: found.id, meta })
}

/**
 * Deletes every session of a user: the one rule behind a ban, a password change, a reset, an
 * account deletion and an admin's revoke. Returns how many were ended. Joins the caller's
 * transaction (ctx.storage.transaction) when there is one.
 */
export async function deleteUserSessions(ctx: AuthContext, userId: string): Promise<number> {
  const ended = await ctx.db.delete(session).where(eq(session.userId, userId)).returning({ id: session.id })
  await sessionsEnded(
    ctx,
    ended.map((row) => row.id),
  )
  return ended.length
}

export async function revokeAllSessions(ctx: AuthContext, userId: string, meta: RequestMeta | null, actorUserId = userId): Promise<number> {
  const count = await ctx.storage.transaction(async () => {
    const ended = await deleteUserSessions(ctx, userId)
    await credentialsRevoked(ctx, { userId, reason: 'sessions-revoked', actorUserId, meta })
    return ended
  })
  await recordAudit(ctx, {
    type: 'session.revoked-all',
    actorUserId,
    targetUserId: userId,
    detail: { count },
    meta,
  })
  return count
}

export async function revokeOtherSessions(ctx: AuthContext, current: SessionWithUser, meta: RequestMeta): Promise<number> {
  const ended = await ctx.db
    .delete(session)
    .where(and(eq(session.userId, current.user.id), ne(session.id, current.session.id)))
    .returning({ id: session.id })
  await sessionsEnded(
    ctx,
    ended.map((row) => row.id),
  )
  await recordAudit(ctx, {
    type: 'session.revoked-others',
    actorUserId: current.user.id,
    detail: { count: ended.length },
    meta,
  })
  return ended.length
}

/** A user's unexpired sessions, impersonation sessions included, oldest first (the admin's list). */
export async function activeSessionsOfUser(ctx: AuthContext, userId: string): Promise<SessionRow[]> {
  return ctx.db
    .select()
    .from(session)
    .where(and(eq(session.userId, userId), gt(session.expiresAt, new Date(ctx.clock.now()))))
    .orderBy(asc(session.createdAt))
}

/** Deletes one session by token; what it was, or undefined when there was none. */
export async function deleteSessionByToken(ctx: AuthContext, token: string): Promise<{ id: string; userId: string } | undefined> {
  const ended = await firstRow(ctx.db.delete(session).where(eq(session.token, token)).returning({ id: session.id, userId: session.userId }))
  if (ended) await sessionsEnded(ctx, [ended.id])
  return ended
}

/** Deletes the sessions of these tokens (the multi-session feature's device sessions); how many there were. */
export async function deleteSessionsByTokens(ctx: AuthContext, tokens: readonly string[]): Promise<number> {
  if (tokens.length === 0) return 0
  const removed = await ctx.db
    .delete(session)
    .where(inArray(session.token, [...tokens]))
    .returning({ id: session.id })
  await sessionsEnded(
    ctx,
    removed.map((row) => row.id),
  )
  return removed.length
}

// ---- a session's active organization and team (the organization feature asks; only this module writes) ----

export async function setSessionActive(
  ctx: AuthContext,
  sessionId: string,
  patch: { activeOrganizationId?: string | null; activeTeamId?: string | null },
): Promise<void> {
  await ctx.db.update(session).set(patch).where(eq(session.id, sessionId))
}

/** Every session of `userId` (or of everyone, without it) that had this organization active loses it and its team. */
export async function clearActiveOrganization(ctx: AuthContext, organizationId: string, userId?: string): Promise<void> {
  const where = userId
    ? and(eq(session.activeOrganizationId, organizationId), eq(session.userId, userId))
    : eq(session.activeOrganizationId, organizationId)
  await ctx.db.update(session).set({ activeOrganizationId: null, activeTeamId: null }).where(where)
}

/** No session keeps one of these teams active (of `userId` only, when given): a team was removed, or the user left it. */
export async function clearActiveTeams(ctx: AuthContext, teamIds: readonly string[], userId?: string): Promise<void> {
  if (teamIds.length === 0) return
  const inTeams = inArray(session.activeTeamId, [...teamIds])
  await ctx.db
    .update(session)
    .set({ activeTeamId: null })
    .where(userId ? and(eq(session.userId, userId), inTeams) : inTeams)
}
