import pg from 'pg'
import type { ChangeScope } from '../storage.js'

/** Payloads that name a scope (storage.ts ChangeScope), not a table. */
const SCOPES: ReadonlySet<string> = new Set<ChangeScope>(['directory'])

/** The channel the gatehouse_change triggers notify on (migration 0002_change_notify). */
export const CHANGE_CHANNEL = 'gatehouse_change'

/** What `onChange` is told after a lost listening connection is back: any table may have changed. */
export const ANY_TABLE = '*'

/** The listening connection's name in pg_stat_activity, so an operator can tell it apart. */
export const LISTENER_APPLICATION_NAME = 'gatehouse-listen'

/**
 * "Has the data an in-memory cache relies on changed since I last looked?", across processes.
 * SQLite answers it with `total_changes()` + `data_version`; PostgreSQL with LISTEN/NOTIFY.
 */
export interface ChangeSignal {
  /**
   * A number that moves whenever a watched table changed, in any instance, the CLI or by hand.
   * Read synchronously: a cache keeps the value it saw and empties itself when it moved.
   */
  version(): number
  /**
   * A number that moves only with notifications of one payload (`'directory'`: migration 0019's
   * triggers, on what the LDAP directory shows), and with every loss of the listening connection.
   */
  scopeVersion(scope: string): number
  /**
   * Resolves once every change committed before the call is reflected in `version()`: no stale
   * window even for a request that reaches this instance right after another one committed.
   * Concurrent calls share one round trip on the listening connection.
   */
  sync(): Promise<void>
  close(): Promise<void>
}

/**
 * The PostgreSQL change signal: one dedicated connection LISTENs on `gatehouse_change`; the
 * triggers of migrations 0002, 0005, 0017 and 0019 NOTIFY it (with the table's name) at the commit of any
 * write to user, session, account, organization, member, team, teamMember, apikey, twoFactor,
 * passkey, keypair, gatehouseConfig or oidcClient, and of a deletion from appPassword — every table an instance caches rows of. Each
 * notification, and each loss of the connection (notifications may be missed while disconnected),
 * moves `version()`.
 *
 * A lost connection is re-established in the background (after `reconnectDelayMs`, doubling up to
 * 10 s while PostgreSQL stays away), and also by the next `sync()`. Once listening again, `onChange`
 * is called with ANY_TABLE: whatever was notified meanwhile is lost, so listeners that keep state
 * of their own (the shared config) read it again.
 *
 * Why `sync()` is needed for "no stale window": a NOTIFY reaches the listener asynchronously, so
 * a revocation committed on instance A may still be in flight to instance B when the client's
 * next request reaches B. PostgreSQL sends a listening session its pending notifications before
 * its next ReadyForQuery, so a round trip on the listening connection (SyncBarrier, below) issued
 * after the request arrived returns only after every notification committed before it was delivered. Callers that
 * need strictness (the session cache) await `sync()` before trusting an entry; calls made while a
 * barrier query is in flight wait for the next one, so N concurrent requests cost at most two
 * round trips, not N.
 */
export async function listenForChanges(
  url: string,
  onChange?: (table: string) => void,
  options: { reconnectDelayMs?: number } = {},
): Promise<ChangeSignal> {
  const firstDelay = options.reconnectDelayMs ?? 250
  let version = 0
  /** Notifications counted per payload; `lostCount` is added to each (anything may change while nobody listens). */
  const scoped = new Map<string, number>()
  let lostCount = 0
  let closed = false
  let client: pg.Client | undefined
  let connecting: Promise<pg.Client> | undefined
  // Set once a connection was lost: the next one to listen announces ANY_TABLE.
  let missed = false
  let retry: NodeJS.Timeout | undefined
  let delay = firstDelay

  const lost = (c: pg.Client): void => {
    if (client !== c) return
    client = undefined
    // Anything may change while nobody listens: caches empty now, state is read again on return.
    version++
    lostCount++
    missed = true
    scheduleReconnect()
  }
  const scheduleReconnect = (): void => {
    if (closed || retry) return
    retry = setTimeout(() => {
      retry = undefined
      ensure().then(
        () => {
          delay = firstDelay
        },
        () => {
          delay = Math.min(delay * 2, 10_000)
          scheduleReconnect()
        },
      )
    }, delay)
    retry.unref()
  }

  const notified = (payload: string): void => {
    scoped.set(payload, (scoped.get(payload) ?? 0) + 1)
    // A scope's notification ('directory') comes beside the table's own, which already moved
    // version() and told onChange: it counts for its scope only.
    if (SCOPES.has(payload)) return
    version++
    onChange?.(payload)
  }
  const connect = async (): Promise<pg.Client> => {
    const c = await openListeningClient(url, notified, lost)
    if (closed) {
      await c.end().catch(() => {})
      throw new Error('change signal closed')
    }
    client = c
    if (missed) {
      missed = false
      version++
      lostCount++
      onChange?.(ANY_TABLE)
    }
    return c
  }
  const ensure = (): Promise<pg.Client> => {
    if (client) return Promise.resolve(client)
    connecting ??= connect().finally(() => {
      connecting = undefined
    })
    return connecting
  }

  await ensure()

  const sync = coalescedBarrier(
    async () => {
      const c = await ensure()
      const barrier = new SyncBarrier()
      c.query(barrier)
      await barrier.done
    },
    () => closed,
  )

  return {
    version: () => version,
    scopeVersion: (scope) => (scoped.get(scope) ?? 0) + lostCount,
    sync,
    async close() {
      closed = true
      clearTimeout(retry)
      const c = client
      client = undefined
      await c?.end().catch(() => {})
    },
  }
}

/**
 * The barrier as the protocol's smallest round trip: a lone Sync message, answered by
 * ReadyForQuery alone (no statement to parse, plan or describe on either side). PostgreSQL sends a
 * session the notifications it was signalled before any ReadyForQuery, whichever message asked for
 * it (postgres.c, `send_ready_for_query`: "if any notifies were received …, they'll be seen by the
 * client before ReadyForQuery is"), so it holds what the `SELECT 1` it replaced held. A pg "submittable": the
 * client queues it like a query and hands it the connection's answers (a lost connection: its error).
 */
class SyncBarrier {
  private settle: { resolve: () => void; reject: (error: Error) => void } | undefined
  readonly done = new Promise<void>((resolve, reject) => {
    this.settle = { resolve, reject }
  })
  submit(connection: { sync(): void }): void {
    connection.sync()
  }
  handleReadyForQuery(): void {
    this.settle?.resolve()
  }
  handleError(error: Error): void {
    this.settle?.reject(error)
  }
  // Answers a lone Sync never gets; a submittable must have them all.
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}
}

/** A connection that LISTENs on the change channel, passing each payload on, and telling when it is lost. */
async function openListeningClient(url: string, onPayload: (payload: string) => void, onLost: (c: pg.Client) => void): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, application_name: LISTENER_APPLICATION_NAME })
  c.on('notification', (message) => {
    if (message.channel === CHANGE_CHANNEL) onPayload(message.payload ?? '')
  })
  // pg emits 'error' for a connection lost while idle, and 'end' when it closes.
  c.on('error', () => onLost(c))
  c.on('end', () => onLost(c))
  try {
    await c.connect()
    await c.query(`LISTEN ${CHANGE_CHANNEL}`)
  } catch (error) {
    await c.end().catch(() => {})
    throw error
  }
  return c
}

/**
 * `sync()` over a barrier query: one query in flight at a time; callers arriving during it wait
 * for the next, so N concurrent callers cost at most two round trips.
 */
function coalescedBarrier(barrier: () => Promise<void>, isClosed: () => boolean): () => Promise<void> {
  let inFlight: Promise<void> | undefined
  let next: Promise<void> | undefined
  const sync = (): Promise<void> => {
    if (isClosed()) return Promise.reject(new Error('change signal closed'))
    if (!inFlight) {
      inFlight = barrier().finally(() => {
        inFlight = undefined
      })
      return inFlight
    }
    next ??= inFlight
      .catch(() => {})
      .then(() => {
        next = undefined
        return sync()
      })
    return next
  }
  return sync
}
