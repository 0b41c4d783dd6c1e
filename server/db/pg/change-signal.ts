import pg from 'pg'

/** The channel the gatehouse_change triggers notify on (migration 0002_change_notify). */
export const CHANGE_CHANNEL = 'gatehouse_change'

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
   * Resolves once every change committed before the call is reflected in `version()`: no stale
   * window even for a request that reaches this instance right after another one committed.
   * Concurrent calls share one round trip on the listening connection.
   */
  sync(): Promise<void>
  close(): Promise<void>
}

/**
 * The PostgreSQL change signal: one dedicated connection LISTENs on `gatehouse_change`; the
 * triggers of migration 0002 NOTIFY it (with the table's name) at the commit of any write to
 * user, session, account, organization, member, team, teamMember, apikey, twoFactor, passkey or
 * keypair. Each notification, and each reconnection (notifications may have been missed while
 * disconnected), moves `version()`.
 *
 * Why `sync()` is needed for "no stale window": a NOTIFY reaches the listener asynchronously, so
 * a revocation committed on instance A may still be in flight to instance B when the client's
 * next request reaches B. PostgreSQL sends a listening session its pending notifications before
 * answering its next query, so a `SELECT 1` on the listening connection issued after the request
 * arrived returns only after every notification committed before it was delivered. Callers that
 * need strictness (the session cache) await `sync()` before trusting an entry; calls made while a
 * barrier query is in flight wait for the next one, so N concurrent requests cost at most two
 * round trips, not N.
 */
export async function listenForChanges(url: string, onChange?: (table: string) => void): Promise<ChangeSignal> {
  let version = 0
  let closed = false
  let client: pg.Client | undefined
  let connecting: Promise<pg.Client> | undefined

  const connect = async (): Promise<pg.Client> => {
    const c = new pg.Client({ connectionString: url })
    c.on('notification', (message) => {
      if (message.channel !== CHANGE_CHANNEL) return
      version++
      onChange?.(message.payload ?? '')
    })
    c.on('error', () => {
      // Lost connection: anything may have changed meanwhile. The next sync() reconnects.
      if (client === c) client = undefined
      version++
    })
    c.on('end', () => {
      if (client === c) client = undefined
      version++
    })
    await c.connect()
    await c.query(`LISTEN ${CHANGE_CHANNEL}`)
    client = c
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

  // The barrier: one query in flight at a time; callers arriving during it wait for the next.
  let inFlight: Promise<void> | undefined
  let next: Promise<void> | undefined
  const barrier = async (): Promise<void> => {
    const c = await ensure()
    await c.query('SELECT 1')
  }
  const sync = (): Promise<void> => {
    if (closed) return Promise.reject(new Error('change signal closed'))
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

  return {
    version: () => version,
    sync,
    async close() {
      closed = true
      const c = client
      client = undefined
      await c?.end().catch(() => {})
    },
  }
}
