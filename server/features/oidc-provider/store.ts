import { and, asc, eq, gt, inArray, isNotNull, isNull, lt, lte, or, sql } from 'drizzle-orm'
import type { AuthContext } from '../../core/context.js'
import { ChangeGuardedCache } from '../../core/session-cache.js'
import type { OutboxStore } from '../../core/outbox.js'
import type { DB } from '../../db/index.js'
import { oidcClient, oidcConsent, oidcLogoutDelivery, oidcModel, oidcRegistrationToken, session, user } from '../../db/schema.js'
import { firstRow, type Storage } from '../../db/storage.js'
import { ConsumedMeanwhile, consumedPayload, type ModelWrite } from './batch.js'
import type { OidcClientRow, OidcConsentRow, OidcLogoutDeliveryRow, OidcModelRow, OidcRegistrationTokenRow } from './schema.js'

/** Every SQL statement of the OIDC provider feature. */

// ------------------------------------------------------------------ prepared statements

/**
 * The statements of every token request (find a model, store one, consume one, find a client),
 * built and prepared once per database handle and run with placeholders: drizzle's query building
 * and SQLite's statement compilation were a fifth of a rotating refresh's CPU time. On PostgreSQL
 * a transaction's handle is new each time, so inside one they are built once per transaction.
 */
const statements = new WeakMap<DB, Map<string, unknown>>()

function statement<T>(ctx: AuthContext, name: string, build: (db: DB) => T): T {
  const db = ctx.db
  let byName = statements.get(db)
  if (!byName) {
    byName = new Map()
    statements.set(db, byName)
  }
  let prepared = byName.get(name) as T | undefined
  if (prepared === undefined) {
    prepared = build(db)
    byName.set(name, prepared)
  }
  return prepared
}

const p = sql.placeholder

/**
 * SQLite's own handle under drizzle (better-sqlite3): the model statements every token request runs
 * (find by id or uid, store, consume) are prepared on it directly, without drizzle's placeholder
 * filling, query wrapper and row mapping; PostgreSQL keeps drizzle's prepared statements.
 */
interface RawStatement {
  get(...params: unknown[]): unknown
  run(...params: unknown[]): { changes: number }
}
const rawStatement = (ctx: AuthContext, name: string, text: string): RawStatement =>
  statement(ctx, `raw:${name}`, (db) => (db as unknown as { $client: { prepare(text: string): RawStatement } }).$client.prepare(text))

/** oidcModel's columns in the table's order (drizzle's select() order). */
const MODEL_COLUMNS = 'kind, id, payload, grantId, uid, userCode, gatehouseSessionId, consumedAt, expiresAt'

interface RawModelRow {
  kind: string
  id: string
  payload: string
  grantId: string | null
  uid: string | null
  userCode: string | null
  gatehouseSessionId: string | null
  consumedAt: number | null
  expiresAt: number | null
}

/** A raw oidcModel row as drizzle maps it (timestamps: epoch milliseconds to Date). */
function modelOf(raw: RawModelRow | undefined): OidcModelRow | undefined {
  if (!raw) return undefined
  return {
    kind: raw.kind,
    id: raw.id,
    payload: raw.payload,
    grantId: raw.grantId,
    uid: raw.uid,
    userCode: raw.userCode,
    gatehouseSessionId: raw.gatehouseSessionId,
    consumedAt: raw.consumedAt === null ? null : new Date(raw.consumedAt),
    expiresAt: raw.expiresAt === null ? null : new Date(raw.expiresAt),
  }
}

/** A nullable timestamp as each driver stores it: epoch milliseconds in SQLite, a Date for node-postgres. */
const driverTime = (ctx: AuthContext, at: Date | null): Date | number | null =>
  at === null ? null : ctx.storage.dialect === 'sqlite' ? at.getTime() : at
const excluded = (column: { name: string }) => sql`excluded.${sql.identifier(column.name)}`

// ------------------------------------------------------------------ oidc-provider's models

/** Inserts or replaces a model; a row without a Gatehouse session link keeps the one it had. */
export async function upsertModel(ctx: AuthContext, row: OidcModelRow): Promise<void> {
  if (ctx.storage.dialect === 'sqlite') {
    rawStatement(
      ctx,
      'upsertModel',
      `insert into oidcModel (${MODEL_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (kind, id) do update set payload = excluded.payload, grantId = excluded.grantId, uid = excluded.uid,
       userCode = excluded.userCode, gatehouseSessionId = coalesce(excluded.gatehouseSessionId, oidcModel.gatehouseSessionId),
       consumedAt = excluded.consumedAt, expiresAt = excluded.expiresAt`,
    ).run(
      row.kind,
      row.id,
      row.payload,
      row.grantId,
      row.uid,
      row.userCode,
      row.gatehouseSessionId || null,
      row.consumedAt === null ? null : row.consumedAt.getTime(),
      row.expiresAt === null ? null : row.expiresAt.getTime(),
    )
    return
  }
  const upsert = statement(ctx, 'upsertModel', (db) =>
    db
      .insert(oidcModel)
      .values({
        kind: p('kind'),
        id: p('id'),
        payload: p('payload'),
        grantId: p('grantId'),
        uid: p('uid'),
        userCode: p('userCode'),
        gatehouseSessionId: p('gatehouseSessionId'),
        // Nullable timestamps: raw placeholders (drizzle's column encoder does not take null), see driverTime.
        consumedAt: sql`${p('consumedAt')}`,
        expiresAt: sql`${p('expiresAt')}`,
      })
      .onConflictDoUpdate({
        target: [oidcModel.kind, oidcModel.id],
        set: {
          payload: excluded(oidcModel.payload),
          grantId: excluded(oidcModel.grantId),
          uid: excluded(oidcModel.uid),
          userCode: excluded(oidcModel.userCode),
          gatehouseSessionId: sql`coalesce(${excluded(oidcModel.gatehouseSessionId)}, ${oidcModel.gatehouseSessionId})`,
          consumedAt: excluded(oidcModel.consumedAt),
          expiresAt: excluded(oidcModel.expiresAt),
        },
      })
      .prepare(),
  )
  await upsert.execute({
    ...row,
    gatehouseSessionId: row.gatehouseSessionId || null,
    consumedAt: driverTime(ctx, row.consumedAt),
    expiresAt: driverTime(ctx, row.expiresAt),
  })
}

export async function findModel(ctx: AuthContext, kind: string, id: string): Promise<OidcModelRow | undefined> {
  if (ctx.storage.dialect === 'sqlite')
    return modelOf(
      rawStatement(ctx, 'findModel', `select ${MODEL_COLUMNS} from oidcModel where kind = ? and id = ?`).get(kind, id) as
        | RawModelRow
        | undefined,
    )
  const find = statement(ctx, 'findModel', (db) =>
    db
      .select()
      .from(oidcModel)
      .where(and(eq(oidcModel.kind, p('kind')), eq(oidcModel.id, p('id'))))
      .prepare(),
  )
  return (await find.execute({ kind, id }))[0]
}

/**
 * A model by uid: prepared, as a refresh of a session-bound token (no offline_access) reads its SSO
 * session this way on every refresh (oidc-provider's checkSessionBinding).
 */
export async function findModelByUid(ctx: AuthContext, kind: string, uid: string): Promise<OidcModelRow | undefined> {
  if (ctx.storage.dialect === 'sqlite')
    return modelOf(
      rawStatement(ctx, 'findModelByUid', `select ${MODEL_COLUMNS} from oidcModel where kind = ? and uid = ? limit 1`).get(kind, uid) as
        | RawModelRow
        | undefined,
    )
  const find = statement(ctx, 'findModelByUid', (db) =>
    db
      .select()
      .from(oidcModel)
      .where(and(eq(oidcModel.kind, p('kind')), eq(oidcModel.uid, p('uid'))))
      .limit(1)
      .prepare(),
  )
  return (await find.execute({ kind, uid }))[0]
}

export async function findModelByUserCode(ctx: AuthContext, kind: string, userCode: string): Promise<OidcModelRow | undefined> {
  return firstRow(
    ctx.db
      .select()
      .from(oidcModel)
      .where(and(eq(oidcModel.kind, kind), eq(oidcModel.userCode, userCode))),
  )
}

/** Marks a model consumed: its payload gains `consumed` (epoch seconds) as oidc-provider expects. */
export async function consumeModel(ctx: AuthContext, kind: string, id: string, at: Date): Promise<void> {
  await ctx.storage.transaction(async () => {
    const row = await findModel(ctx, kind, id)
    if (!row) return
    await ctx.db
      .update(oidcModel)
      .set({ payload: consumedPayload(row.payload, at), consumedAt: at })
      .where(and(eq(oidcModel.kind, kind), eq(oidcModel.id, id)))
  })
}

/**
 * Consumes a model only if it is still unconsumed (`seen`: the row as the request read it, so no
 * second read); throws ConsumedMeanwhile when another request consumed or removed it first.
 */
async function consumeUnconsumed(
  ctx: AuthContext,
  kind: string,
  id: string,
  at: Date,
  seen: OidcModelRow | null,
  payload: string | null,
): Promise<void> {
  const row = seen ?? (await findModel(ctx, kind, id))
  if (!row) return
  const text = seen && payload ? payload : consumedPayload(row.payload, at)
  if (ctx.storage.dialect === 'sqlite') {
    const { changes } = rawStatement(
      ctx,
      'consumeUnconsumed',
      'update oidcModel set payload = ?, consumedAt = ? where kind = ? and id = ? and consumedAt is null',
    ).run(text, at.getTime(), kind, id)
    if (changes === 0) throw new ConsumedMeanwhile(kind, row.grantId)
    return
  }
  const consume = statement(ctx, 'consumeUnconsumed', (db) =>
    db
      .update(oidcModel)
      .set({ payload: sql`${p('payload')}`, consumedAt: sql`${p('consumedAt')}` })
      .where(and(eq(oidcModel.kind, p('kind')), eq(oidcModel.id, p('id')), isNull(oidcModel.consumedAt)))
      .returning({ id: oidcModel.id })
      .prepare(),
  )
  const updated = await consume.execute({
    payload: text,
    consumedAt: driverTime(ctx, at),
    kind,
    id,
  })
  if (updated.length === 0) throw new ConsumedMeanwhile(kind, row.grantId)
}

/** A token request's model writes, in order (the caller's transaction holds them; see batch.ts). */
export async function applyModelWrites(ctx: AuthContext, writes: readonly ModelWrite[]): Promise<void> {
  for (const write of writes) {
    if (write.op === 'upsert') await upsertModel(ctx, write.row)
    else if (write.op === 'consume') await consumeUnconsumed(ctx, write.kind, write.id, write.at, write.seen, write.payload)
    else if (write.op === 'destroy') await destroyModel(ctx, write.kind, write.id)
    else await deleteByGrantId(ctx, write.kind, write.grantId)
  }
}

export async function destroyModel(ctx: AuthContext, kind: string, id: string): Promise<void> {
  const destroy = statement(ctx, 'destroyModel', (db) =>
    db
      .delete(oidcModel)
      .where(and(eq(oidcModel.kind, p('kind')), eq(oidcModel.id, p('id'))))
      .prepare(),
  )
  await destroy.execute({ kind, id })
}

/** Deletes the rows of one kind (codes, access or refresh tokens) issued under a grant. */
export async function deleteByGrantId(ctx: AuthContext, kind: string, grantId: string): Promise<number> {
  return (
    await ctx.db
      .delete(oidcModel)
      .where(and(eq(oidcModel.kind, kind), eq(oidcModel.grantId, grantId)))
      .returning({ id: oidcModel.id })
  ).length
}

/** Deletes a grant and everything issued under it (codes, access and refresh tokens, …); returns how many rows. */
export async function deleteGrantAndTokens(ctx: AuthContext, grantId: string): Promise<number> {
  const tokens = await ctx.db.delete(oidcModel).where(eq(oidcModel.grantId, grantId)).returning({ id: oidcModel.id })
  const grant = await ctx.db
    .delete(oidcModel)
    .where(and(eq(oidcModel.kind, 'Grant'), eq(oidcModel.id, grantId)))
    .returning({ id: oidcModel.id })
  return tokens.length + grant.length
}

/** Removes rows whose expiry has passed. */
export async function deleteExpiredModels(ctx: AuthContext, now: Date): Promise<number> {
  return (
    await ctx.db
      .delete(oidcModel)
      .where(and(isNotNull(oidcModel.expiresAt), lte(oidcModel.expiresAt, now)))
      .returning({ id: oidcModel.id })
  ).length
}

/**
 * A user's row by id: core's findUserById as a prepared statement (every refresh and code exchange
 * reads it to check the account; building the query each time was most of its cost).
 */
export async function findUserRow(ctx: AuthContext, id: string): Promise<typeof user.$inferSelect | undefined> {
  const find = statement(ctx, 'findUserRow', (db) =>
    db
      .select()
      .from(user)
      .where(eq(user.id, p('id')))
      .prepare(),
  )
  return (await find.execute({ id }))[0]
}

/**
 * Whether a Gatehouse session still exists and has not expired. Prepared: a session-bound refresh
 * token's every refresh asks it (through findByUid).
 */
export async function gatehouseSessionActive(ctx: AuthContext, sessionId: string, now: Date): Promise<boolean> {
  const find = statement(ctx, 'gatehouseSessionActive', (db) =>
    db
      .select({ id: session.id })
      .from(session)
      .where(and(eq(session.id, p('id')), gt(session.expiresAt, sql`${p('now')}`)))
      .limit(1)
      .prepare(),
  )
  return (await find.execute({ id: sessionId, now: driverTime(ctx, now) })).length > 0
}

// ------------------------------------------------------------------ clients

/**
 * Clients read on every token request (client authentication, then the account check), cached per
 * storage. Another process's commit (the CLI, another instance) empties the cache, as do this
 * process's own client writes below (insert, update, delete): a change counts on the next request.
 */
const clientCaches = new WeakMap<Storage, ChangeGuardedCache<OidcClientRow>>()

function clientCache(ctx: AuthContext): ChangeGuardedCache<OidcClientRow> {
  let cache = clientCaches.get(ctx.storage)
  if (!cache) {
    cache = new ChangeGuardedCache(ctx.storage.changeSignal(), 1_000)
    clientCaches.set(ctx.storage, cache)
  }
  return cache
}

/** Before and after each client write, so no read made while it was under way stays cached. */
const forgetClients = (ctx: AuthContext): void => {
  clientCaches.delete(ctx.storage)
}

export async function insertClient(ctx: AuthContext, row: OidcClientRow): Promise<void> {
  forgetClients(ctx)
  await ctx.db.insert(oidcClient).values(row)
  forgetClients(ctx)
}

export async function findClient(ctx: AuthContext, clientId: string): Promise<OidcClientRow | undefined> {
  const cache = clientCache(ctx)
  await cache.sync?.()
  const cached = cache.get(clientId)
  if (cached) return cached
  const mark = cache.mark()
  const find = statement(ctx, 'findClient', (db) =>
    db
      .select()
      .from(oidcClient)
      .where(eq(oidcClient.clientId, p('clientId')))
      .prepare(),
  )
  const row = (await find.execute({ clientId }))[0]
  if (row) cache.set(clientId, row, mark)
  return row
}

/** A client as stored now, past the cache: read inside the transaction that changes it (a save's check of what changed meanwhile). */
export async function clientAsStored(ctx: AuthContext, clientId: string): Promise<OidcClientRow | undefined> {
  return firstRow(ctx.db.select().from(oidcClient).where(eq(oidcClient.clientId, clientId)))
}

export async function listClients(ctx: AuthContext): Promise<OidcClientRow[]> {
  return ctx.db.select().from(oidcClient).orderBy(asc(oidcClient.createdAt), asc(oidcClient.clientId))
}

export async function updateClient(
  ctx: AuthContext,
  clientId: string,
  patch: Partial<Omit<OidcClientRow, 'clientId'>>,
): Promise<OidcClientRow | undefined> {
  forgetClients(ctx)
  const row = (await ctx.db.update(oidcClient).set(patch).where(eq(oidcClient.clientId, clientId)).returning())[0]
  forgetClients(ctx)
  return row
}

export async function deleteClient(ctx: AuthContext, clientId: string): Promise<boolean> {
  forgetClients(ctx)
  const deleted = await ctx.db.delete(oidcClient).where(eq(oidcClient.clientId, clientId)).returning({ id: oidcClient.clientId })
  forgetClients(ctx)
  return deleted.length > 0
}

// ------------------------------------------------------------------ remembered consent

export async function findConsent(ctx: AuthContext, userId: string, clientId: string): Promise<OidcConsentRow | undefined> {
  return firstRow(
    ctx.db
      .select()
      .from(oidcConsent)
      .where(and(eq(oidcConsent.userId, userId), eq(oidcConsent.clientId, clientId))),
  )
}

export async function upsertConsent(ctx: AuthContext, row: OidcConsentRow): Promise<void> {
  const { userId, clientId, createdAt, ...rest } = row
  await ctx.db
    .insert(oidcConsent)
    .values(row)
    .onConflictDoUpdate({ target: [oidcConsent.userId, oidcConsent.clientId], set: rest })
}

export async function deleteConsent(ctx: AuthContext, userId: string, clientId: string): Promise<OidcConsentRow | undefined> {
  return (
    await ctx.db
      .delete(oidcConsent)
      .where(and(eq(oidcConsent.userId, userId), eq(oidcConsent.clientId, clientId)))
      .returning()
  )[0]
}

export interface ConsentWithClient extends OidcConsentRow {
  clientName: string
  clientLogo: string | null
}

/** A user's remembered consents with their client's name and logo, by client name. */
export async function consentsOfUser(ctx: AuthContext, userId: string): Promise<ConsentWithClient[]> {
  const rows = await ctx.db
    .select({ consent: oidcConsent, clientName: oidcClient.name, clientLogo: oidcClient.logo })
    .from(oidcConsent)
    .innerJoin(oidcClient, eq(oidcClient.clientId, oidcConsent.clientId))
    .where(eq(oidcConsent.userId, userId))
    .orderBy(asc(oidcClient.name), asc(oidcConsent.clientId))
  return rows.map((r) => ({ ...r.consent, clientName: r.clientName, clientLogo: r.clientLogo }))
}

// ------------------------------------------------------------------ memberships (claims, access)

// ------------------------------------------------------------------ back-channel logout deliveries

/** The OIDC sessions (SSO) signed in from these Gatehouse sessions: their payloads. */
export async function oidcSessionsOf(ctx: AuthContext, gatehouseSessionIds: readonly string[]): Promise<string[]> {
  if (gatehouseSessionIds.length === 0) return []
  const rows = await ctx.db
    .select({ payload: oidcModel.payload })
    .from(oidcModel)
    .where(and(eq(oidcModel.kind, 'Session'), inArray(oidcModel.gatehouseSessionId, [...gatehouseSessionIds])))
  return rows.map((row) => row.payload)
}

/** The clients among these ids that take back-channel logout notices. */
export async function backchannelClients(ctx: AuthContext, clientIds: readonly string[]): Promise<Set<string>> {
  if (clientIds.length === 0) return new Set()
  const rows = await ctx.db
    .select({ clientId: oidcClient.clientId })
    .from(oidcClient)
    .where(and(inArray(oidcClient.clientId, [...clientIds]), isNotNull(oidcClient.backchannelLogoutUri)))
  return new Set(rows.map((row) => row.clientId))
}

/** Queues deliveries; one per client and sid ever (a second notice of the same session is dropped). Returns how many are new. */
export async function queueLogoutDeliveries(ctx: AuthContext, rows: OidcLogoutDeliveryRow[]): Promise<number> {
  if (rows.length === 0) return 0
  const added = await ctx.db
    .insert(oidcLogoutDelivery)
    .values(rows)
    .onConflictDoNothing({ target: [oidcLogoutDelivery.clientId, oidcLogoutDelivery.sid] })
    .returning({ id: oidcLogoutDelivery.id })
  return added.length
}

const claimableDelivery = (now: Date) =>
  and(
    isNull(oidcLogoutDelivery.sentAt),
    lte(oidcLogoutDelivery.nextAttemptAt, now),
    or(isNull(oidcLogoutDelivery.claimedUntil), lte(oidcLogoutDelivery.claimedUntil, now)),
  )

/** The clients with due, unclaimed deliveries (each is delivered to in its own lane). */
export async function dueLogoutClients(ctx: AuthContext, now: Date, limit: number): Promise<string[]> {
  const rows = await ctx.db
    .selectDistinct({ clientId: oidcLogoutDelivery.clientId })
    .from(oidcLogoutDelivery)
    .where(claimableDelivery(now))
    .orderBy(asc(oidcLogoutDelivery.clientId))
    .limit(limit)
  return rows.map((row) => row.clientId)
}

/** A client that failed: its other due deliveries wait for the same retry, unattempted. */
export async function postponeClientDeliveries(
  ctx: AuthContext,
  clientId: string,
  { now, retryAt, error }: { now: Date; retryAt: Date; error: string },
): Promise<void> {
  await ctx.db
    .update(oidcLogoutDelivery)
    .set({ nextAttemptAt: retryAt, lastError: error })
    .where(and(claimableDelivery(now), eq(oidcLogoutDelivery.clientId, clientId)))
}

/** Undelivered notices queued before `before` are given up: removed, with their client's id. */
export async function dropStaleLogoutDeliveries(ctx: AuthContext, before: Date): Promise<string[]> {
  const rows = await ctx.db
    .delete(oidcLogoutDelivery)
    .where(and(isNull(oidcLogoutDelivery.sentAt), lt(oidcLogoutDelivery.createdAt, before)))
    .returning({ clientId: oidcLogoutDelivery.clientId })
  return rows.map((row) => row.clientId)
}

/**
 * A client's back-channel state after a delivery: failing (since the first failure of a run of
 * them, kept; the last error replaced) or healthy again. The failing-since time, or null.
 */
export async function setBackchannelState(
  ctx: AuthContext,
  clientId: string,
  state: { failingAt: Date; error: string } | 'healthy',
): Promise<Date | null> {
  forgetClients(ctx)
  if (state === 'healthy') {
    await ctx.db
      .update(oidcClient)
      .set({ backchannelFailingSince: null, backchannelLastError: null })
      .where(and(eq(oidcClient.clientId, clientId), isNotNull(oidcClient.backchannelFailingSince)))
    forgetClients(ctx)
    return null
  }
  const row = await firstRow(
    ctx.db
      .update(oidcClient)
      .set({
        backchannelFailingSince: sql`coalesce(${oidcClient.backchannelFailingSince}, ${driverTime(ctx, state.failingAt)})`,
        backchannelLastError: state.error,
      })
      .where(eq(oidcClient.clientId, clientId))
      .returning({ since: oidcClient.backchannelFailingSince }),
  )
  forgetClients(ctx)
  return row?.since ?? null
}

/**
 * Claims up to `limit` due deliveries of one client for this instance for `leaseMs`: one UPDATE whose condition
 * is checked again on each row it changes (SQLite: under its write lock; PostgreSQL, read
 * committed: a row another instance claimed meanwhile is re-read and skipped), so a row is claimed
 * by one instance at a time. Counts the attempt.
 */
export async function claimLogoutDeliveries(
  ctx: AuthContext,
  clientId: string,
  claim: { now: Date; leaseMs: number; limit: number },
): Promise<OidcLogoutDeliveryRow[]> {
  const claimable = and(claimableDelivery(claim.now), eq(oidcLogoutDelivery.clientId, clientId))
  const due = ctx.db
    .select({ id: oidcLogoutDelivery.id })
    .from(oidcLogoutDelivery)
    .where(claimable)
    .orderBy(asc(oidcLogoutDelivery.nextAttemptAt))
    .limit(claim.limit)
  return ctx.db
    .update(oidcLogoutDelivery)
    .set({ claimedUntil: new Date(claim.now.getTime() + claim.leaseMs), attempts: sql`${oidcLogoutDelivery.attempts} + 1` })
    .where(and(inArray(oidcLogoutDelivery.id, due), claimable))
    .returning()
}

export async function finishLogoutDelivery(
  ctx: AuthContext,
  id: string,
  outcome: { sentAt: Date } | { retryAt: Date; error: string },
): Promise<void> {
  const patch =
    'sentAt' in outcome
      ? { sentAt: outcome.sentAt, claimedUntil: null, lastError: null }
      : { nextAttemptAt: outcome.retryAt, claimedUntil: null, lastError: outcome.error }
  await ctx.db.update(oidcLogoutDelivery).set(patch).where(eq(oidcLogoutDelivery.id, id))
}

export async function dropLogoutDelivery(ctx: AuthContext, id: string): Promise<void> {
  await ctx.db.delete(oidcLogoutDelivery).where(eq(oidcLogoutDelivery.id, id))
}

/** The outbox engine's store (core/outbox.ts) over `oidcLogoutDelivery`: a destination is a client. */
export function logoutDeliveryStore(ctx: AuthContext): OutboxStore<OidcLogoutDeliveryRow> {
  return {
    dueDestinations: (now, limit) => dueLogoutClients(ctx, now, limit),
    claim: (clientId, claim) => claimLogoutDeliveries(ctx, clientId, claim),
    sent: (row, at) => finishLogoutDelivery(ctx, row.id, { sentAt: at }),
    failed: (row, { error, retryAt, at }) => finishLogoutDelivery(ctx, row.id, { retryAt: retryAt ?? at, error }),
    drop: (row) => dropLogoutDelivery(ctx, row.id),
    postpone: (clientId, failure) => postponeClientDeliveries(ctx, clientId, failure),
    failing: (clientId, { at, error }) => setBackchannelState(ctx, clientId, { failingAt: at, error }),
    expire: (before) => dropStaleLogoutDeliveries(ctx, before),
  }
}

/** Sent deliveries older than `before`, and unsent ones queued before `giveUpBefore`, are removed. */
export async function deleteOldLogoutDeliveries(ctx: AuthContext, before: Date, giveUpBefore: Date): Promise<number> {
  return (
    await ctx.db
      .delete(oidcLogoutDelivery)
      .where(
        or(
          and(isNotNull(oidcLogoutDelivery.sentAt), lt(oidcLogoutDelivery.sentAt, before)),
          and(isNull(oidcLogoutDelivery.sentAt), lt(oidcLogoutDelivery.createdAt, giveUpBefore)),
        ),
      )
      .returning({ id: oidcLogoutDelivery.id })
  ).length
}

/** The queue as the panel and tests see it. */
export async function listLogoutDeliveries(ctx: AuthContext): Promise<OidcLogoutDeliveryRow[]> {
  return ctx.db.select().from(oidcLogoutDelivery).orderBy(asc(oidcLogoutDelivery.createdAt))
}

// ------------------------------------------------------------------ registration (initial access) tokens

export async function insertRegistrationToken(ctx: AuthContext, row: OidcRegistrationTokenRow): Promise<void> {
  await ctx.db.insert(oidcRegistrationToken).values(row)
}

export async function listRegistrationTokens(ctx: AuthContext): Promise<OidcRegistrationTokenRow[]> {
  return ctx.db.select().from(oidcRegistrationToken).orderBy(asc(oidcRegistrationToken.createdAt), asc(oidcRegistrationToken.id))
}

export async function revokeRegistrationToken(ctx: AuthContext, id: string, at: Date): Promise<boolean> {
  const revoked = await ctx.db
    .update(oidcRegistrationToken)
    .set({ revokedAt: at })
    .where(and(eq(oidcRegistrationToken.id, id), isNull(oidcRegistrationToken.revokedAt)))
    .returning({ id: oidcRegistrationToken.id })
  return revoked.length > 0
}

/**
 * Spends one use of the token with this hash, when it is valid now (not revoked, not expired, a use
 * left, fewer than `maxClients` registrations made with it): one UPDATE, so two registrations racing
 * for its last use cannot both have it. Its id, or undefined.
 */
export async function spendRegistrationToken(
  ctx: AuthContext,
  tokenHash: string,
  now: Date,
  maxClients: number,
): Promise<string | undefined> {
  const spent = await firstRow(
    ctx.db
      .update(oidcRegistrationToken)
      .set({
        used: sql`${oidcRegistrationToken.used} + 1`,
        usesLeft: sql`case when ${oidcRegistrationToken.usesLeft} is null then null else ${oidcRegistrationToken.usesLeft} - 1 end`,
      })
      .where(
        and(
          eq(oidcRegistrationToken.tokenHash, tokenHash),
          isNull(oidcRegistrationToken.revokedAt),
          or(isNull(oidcRegistrationToken.expiresAt), gt(oidcRegistrationToken.expiresAt, now)),
          or(isNull(oidcRegistrationToken.usesLeft), gt(oidcRegistrationToken.usesLeft, 0)),
          lt(oidcRegistrationToken.used, maxClients),
        ),
      )
      .returning({ id: oidcRegistrationToken.id }),
  )
  return spent?.id
}

/** The token with this hash, whatever its state (to say why a registration was refused). */
export async function findRegistrationTokenByHash(ctx: AuthContext, tokenHash: string): Promise<OidcRegistrationTokenRow | undefined> {
  return firstRow(ctx.db.select().from(oidcRegistrationToken).where(eq(oidcRegistrationToken.tokenHash, tokenHash)))
}

/** Gives back the use a registration spent when it was refused (its metadata): the token's count as before. */
export async function refundRegistrationToken(ctx: AuthContext, id: string): Promise<void> {
  await ctx.db
    .update(oidcRegistrationToken)
    .set({
      used: sql`${oidcRegistrationToken.used} - 1`,
      usesLeft: sql`case when ${oidcRegistrationToken.usesLeft} is null then null else ${oidcRegistrationToken.usesLeft} + 1 end`,
    })
    .where(and(eq(oidcRegistrationToken.id, id), gt(oidcRegistrationToken.used, 0)))
}

/** Stores a self-registered client (RFC 7591/7592 through oidc-provider): inserted or replaced. */
export async function upsertRegisteredClient(ctx: AuthContext, row: OidcClientRow): Promise<void> {
  forgetClients(ctx)
  // The delivery job's state of the client is its own, never what an update of the metadata read.
  const {
    clientId: _id,
    createdAt: _created,
    registeredByToken: _token,
    backchannelFailingSince: _since,
    backchannelLastError: _error,
    ...rest
  } = row
  await ctx.db.insert(oidcClient).values(row).onConflictDoUpdate({ target: oidcClient.clientId, set: rest })
  forgetClients(ctx)
}
