import { and, count, desc, eq, gte, lt, lte, or, type SQL, sql } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import { auditEvent, user } from '../db/schema.js'
import { firstRow } from '../db/storage.js'
import type { AuthContext, RequestMeta } from './context.js'
import { PANEL_IMPERSONATOR } from './impersonation.js'
import { callerLabel, panelCaller } from './panel-caller.js'

export type AuditEventType =
  | 'user.sign-up'
  | 'user.sign-in'
  | 'user.sign-out'
  | 'session.revoked'
  | 'session.revoked-all'
  | 'session.revoked-others'
  | 'session.expired'

export interface AuditInput {
  type: AuditEventType | (string & {})
  outcome?: 'success' | 'failure'
  actorUserId?: string | null
  targetUserId?: string | null
  target?: string | null
  detail?: Record<string, unknown> | null
  meta?: RequestMeta | null
}

/**
 * Appends one event to the audit log. The log is append-only: nothing updates or deletes it.
 *
 * Inside a control-panel operation (server/core/panel-caller.ts) the event names the panel's
 * caller as its actor, whatever the feature passed: the admin who acted, or (no user row) the
 * desktop's OS account or the recovery link in `detail.actor`. A user the feature named as actor
 * (e.g. the owner of an API key created from the panel) becomes the target instead. Likewise in a
 * request of an impersonation session (`meta.impersonation`): the impersonator is the actor (none
 * for a panel link's session, `detail.impersonatedBy` says so), the person the target unless the
 * event names another, and `detail.impersonatedUserId` names the person.
 */
export async function recordAudit(ctx: AuthContext, event: AuditInput): Promise<void> {
  const caller = panelCaller()
  let actorUserId = event.actorUserId ?? null
  const targetUserId = event.targetUserId ?? event.actorUserId ?? null
  let detail = event.detail ?? null
  let meta = event.meta ?? null
  const impersonation = meta?.impersonation
  if (impersonation && !caller) {
    actorUserId = impersonation.by === PANEL_IMPERSONATOR ? null : impersonation.by
    detail = { ...detail, impersonatedBy: impersonation.by, impersonatedUserId: impersonation.userId }
  }
  if (caller) {
    actorUserId = caller.kind === 'admin' ? caller.user.id : null
    if (caller.kind !== 'admin') detail = { ...detail, actor: callerLabel(caller) }
    // The panel's own placeholder meta (no address) gives way to the caller's.
    if (!meta || meta.ipAddress === null) meta = { ...caller.meta, requestId: meta?.requestId ?? caller.meta.requestId ?? null }
  }
  const createdAt = ctx.clock.now()
  await insertStatement(ctx).execute({
    type: event.type,
    outcome: event.outcome ?? 'success',
    actorUserId,
    targetUserId,
    target: event.target ?? null,
    ipAddress: meta?.ipAddress ?? null,
    userAgent: meta?.userAgent ?? null,
    // Raw placeholders (drizzle's encoders are skipped): the JSON text, the timestamp as each driver takes it.
    detail: detail === null ? null : JSON.stringify(detail),
    requestId: meta?.requestId ?? null,
    createdAt: ctx.storage.dialect === 'sqlite' ? createdAt : new Date(createdAt),
  })
  const listener = listeners.get(ctx)
  if (listener)
    await listener(ctx, {
      type: event.type,
      outcome: event.outcome ?? 'success',
      actorUserId,
      targetUserId,
      target: event.target ?? null,
      detail,
      meta,
      at: createdAt,
    })
}

/** An event as recorded (after the panel's and an impersonation's rewriting), for the features that react to it. */
export interface RecordedAudit {
  type: string
  outcome: 'success' | 'failure'
  actorUserId: string | null
  /** The person the event is about (the actor when the event named no other). */
  targetUserId: string | null
  target: string | null
  detail: Record<string, unknown> | null
  meta: RequestMeta | null
  at: number
}

type AuditListener = (ctx: AuthContext, event: RecordedAudit) => Promise<void>

const listeners = new WeakMap<object, AuditListener>()

/**
 * Who hears of each recorded event (features-of.ts attaches the features' `audited` hooks per
 * context): the one place an event of the account's life is recorded is the one place a feature
 * reacts to it (the account feature's security notices). Tool contexts attach none.
 */
export function setAuditListener(ctx: object, listener: AuditListener): void {
  listeners.set(ctx, listener)
}

/**
 * The audit insert, built and prepared once per database handle (every token request, sign-in and
 * admin action writes one; building the query each time was a visible share of a token request's
 * CPU). On PostgreSQL a transaction's handle is new each time, so there once per transaction.
 */
const insertStatements = new WeakMap<object, ReturnType<typeof buildInsert>>()

function buildInsert(ctx: AuthContext) {
  const p = sql.placeholder
  return ctx.db
    .insert(auditEvent)
    .values({
      type: p('type'),
      outcome: p('outcome'),
      actorUserId: p('actorUserId'),
      targetUserId: p('targetUserId'),
      target: p('target'),
      ipAddress: p('ipAddress'),
      userAgent: p('userAgent'),
      detail: sql`${p('detail')}`,
      requestId: p('requestId'),
      createdAt: sql`${p('createdAt')}`,
    })
    .prepare()
}

function insertStatement(ctx: AuthContext): ReturnType<typeof buildInsert> {
  let prepared = insertStatements.get(ctx.db)
  if (!prepared) {
    prepared = buildInsert(ctx)
    insertStatements.set(ctx.db, prepared)
  }
  return prepared
}

// ---------------------------------------------------------------------------------------------
// Reading the log (control panel)

export type AuditRow = typeof auditEvent.$inferSelect

export interface AuditQuery {
  /** An exact type, or a prefix ending in `*` (e.g. `security.*`). */
  type?: string
  /** A user id or an email address: matched as actor, target, or the email a failed sign-in named. */
  user?: string
  /** An address prefix. */
  ip?: string
  outcome?: 'success' | 'failure'
  /** Exactly this target (an object's id: its trail of changes). */
  target?: string
  /** Epoch milliseconds, inclusive. */
  from?: number
  to?: number
}

/** `column` starts with `prefix`, taken literally (LIKE wildcards escaped, with the ESCAPE clause that makes the escapes count). */
const startsWith = (column: SQLiteColumn, prefix: string): SQL =>
  sql`${column} LIKE ${`${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`} ESCAPE '\\'`

async function whereOf(ctx: AuthContext, query: AuditQuery): Promise<SQL | undefined> {
  const conditions: SQL[] = []
  if (query.type) {
    conditions.push(query.type.endsWith('*') ? startsWith(auditEvent.type, query.type.slice(0, -1)) : eq(auditEvent.type, query.type))
  }
  if (query.outcome) conditions.push(eq(auditEvent.outcome, query.outcome))
  if (query.target !== undefined) conditions.push(eq(auditEvent.target, query.target))
  if (query.ip) conditions.push(startsWith(auditEvent.ipAddress, query.ip))
  if (query.from !== undefined) conditions.push(gte(auditEvent.createdAt, new Date(query.from)))
  if (query.to !== undefined) conditions.push(lte(auditEvent.createdAt, new Date(query.to)))
  if (query.user) {
    const value = query.user.trim()
    const ids = [value]
    if (value.includes('@')) {
      const found = await firstRow(ctx.db.select({ id: user.id }).from(user).where(eq(user.email, value.toLowerCase())))
      if (found) ids.push(found.id)
    }
    const byUser: SQL[] = ids.flatMap((id) => [eq(auditEvent.actorUserId, id), eq(auditEvent.targetUserId, id)])
    if (value.includes('@')) {
      // The one JSON read of the log: each engine spells it its own way.
      const email =
        ctx.storage.dialect === 'postgres'
          ? sql`(${auditEvent.detail})::jsonb ->> 'email'`
          : sql`json_extract(${auditEvent.detail}, '$.email')`
      byUser.push(sql`lower(${email}) = ${value.toLowerCase()}`)
    }
    const any = or(...byUser)
    if (any) conditions.push(any)
  }
  return conditions.length ? and(...conditions) : undefined
}

/** Events matching a query, newest first; `limit` unset means all of them (exports). */
export async function queryAuditEvents(
  ctx: AuthContext,
  query: AuditQuery,
  page: { limit?: number; offset?: number } = {},
): Promise<{ events: AuditRow[]; total: number }> {
  const where = await whereOf(ctx, query)
  const total = (await firstRow(ctx.db.select({ n: count() }).from(auditEvent).where(where)))?.n ?? 0
  const ordered = ctx.db.select().from(auditEvent).where(where).orderBy(desc(auditEvent.createdAt), desc(auditEvent.id)).$dynamic()
  const events = page.limit === undefined ? await ordered : await ordered.limit(page.limit).offset(page.offset ?? 0)
  return { events, total }
}

/**
 * One page of every event matching a query, newest first, after a keyset cursor (the last row of
 * the previous page): exports walk the whole log page by page, in bounded memory, with no cap,
 * and rows appended meanwhile (newer) never shift the pages still to come.
 */
export async function auditEventsPage(
  ctx: AuthContext,
  query: AuditQuery,
  after: { createdAt: number; id: number } | null,
  size: number,
): Promise<{ events: AuditRow[]; total: number; next: { createdAt: number; id: number } | null }> {
  const where = await whereOf(ctx, query)
  const total = (await firstRow(ctx.db.select({ n: count() }).from(auditEvent).where(where)))?.n ?? 0
  const cursor = after
    ? or(
        lt(auditEvent.createdAt, new Date(after.createdAt)),
        and(eq(auditEvent.createdAt, new Date(after.createdAt)), lt(auditEvent.id, after.id)),
      )
    : undefined
  const events = await ctx.db
    .select()
    .from(auditEvent)
    .where(and(where, cursor))
    .orderBy(desc(auditEvent.createdAt), desc(auditEvent.id))
    .limit(size)
  const last = events[events.length - 1]
  const next = events.length === size && last ? { createdAt: last.createdAt.getTime(), id: last.id } : null
  return { events, total, next }
}

/** The event types present in the log. */
export async function auditEventTypes(ctx: AuthContext): Promise<string[]> {
  const rows = await ctx.db.selectDistinct({ type: auditEvent.type }).from(auditEvent).orderBy(auditEvent.type)
  return rows.map((r) => r.type)
}

/** The latest successful event of a type about a user (the ban in force: who banned them, when), or null. */
export async function latestAuditEventAbout(ctx: AuthContext, type: string, targetUserId: string): Promise<AuditRow | null> {
  const about = and(eq(auditEvent.type, type), eq(auditEvent.targetUserId, targetUserId), eq(auditEvent.outcome, 'success'))
  return (await firstRow(ctx.db.select().from(auditEvent).where(about).orderBy(desc(auditEvent.id)).limit(1))) ?? null
}

/** The latest events, or the latest ones a user took part in (as actor or target). */
export async function recentAuditEvents(ctx: AuthContext, limit: number, userId?: string): Promise<AuditRow[]> {
  const byUser = userId ? or(eq(auditEvent.actorUserId, userId), eq(auditEvent.targetUserId, userId)) : undefined
  return ctx.db.select().from(auditEvent).where(byUser).orderBy(desc(auditEvent.id)).limit(limit)
}
