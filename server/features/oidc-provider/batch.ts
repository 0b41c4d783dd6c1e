import type { AuditInput } from '../../core/audit.js'
import type { OidcModelRow } from './schema.js'

/**
 * The writes of one token request, kept in memory while oidc-provider handles it and committed in
 * one transaction (with the request's audit entries) before the answer leaves: one commit instead
 * of one per write (consume the old refresh token, store the new one and the access token, the
 * audit entry), and still nothing acknowledged that is not on disk.
 *
 * The adapter reads through the batch (a model this request wrote, consumed, destroyed or revoked
 * reads as it will be once committed). Consuming is conditional at commit: the row must still be
 * unconsumed; when another request consumed it in the meantime (two requests presenting the same
 * refresh token or code at once), the commit fails with `ConsumedMeanwhile` and the request is
 * answered as a reuse (see provider.ts).
 */

export type ModelWrite =
  | { op: 'upsert'; row: OidcModelRow }
  /**
   * `seen`: the row as this request read it, `payload`: that row's payload with `consumed` added
   * (what the commit writes); null: not read here (the commit reads it).
   */
  | { op: 'consume'; kind: string; id: string; at: Date; seen: OidcModelRow | null; payload: string | null }
  | { op: 'destroy'; kind: string; id: string }
  | { op: 'revoke'; kind: string; grantId: string }

/** A model this request consumed was consumed (or removed) by another one before the commit. */
export class ConsumedMeanwhile extends Error {
  constructor(
    readonly kind: string,
    readonly grantId: string | null,
  ) {
    super(`${kind} was consumed by another request`)
  }
}

const keyOf = (kind: string, id: string): string => `${kind}\u0000${id}`

/** The payload of a consumed model: oidc-provider's `consumed` (epoch seconds) added. */
export function consumedPayload(payload: string, at: Date): string {
  const consumed = Math.floor(at.getTime() / 1000)
  // A stored payload is JSON.stringify's text of a non-empty object: without a `consumed` member,
  // adding it last is the same text as parsing, spreading and stringifying again.
  if (payload.length > 2 && payload.startsWith('{"') && payload.endsWith('}') && !payload.includes('"consumed":'))
    return `${payload.slice(0, -1)},"consumed":${consumed}}`
  return JSON.stringify({ ...(JSON.parse(payload) as Record<string, unknown>), consumed })
}

export class WriteBatch {
  readonly writes: ModelWrite[] = []
  readonly audits: AuditInput[] = []
  /** Set once the commit starts: later writes go straight to the database. */
  closed = false
  /** Rows as this request leaves them (null: destroyed or revoked). */
  private readonly overlay = new Map<string, OidcModelRow | null>()
  /** Rows read from the database by this request (what a consume updates). */
  private readonly seen = new Map<string, OidcModelRow>()
  /** `kind\0grantId` revoked by this request: rows read afterwards under them are gone. */
  private readonly revoked = new Set<string>()

  /** The row as this request sees it: undefined = not touched here (read the database), null = gone. */
  overlaid(kind: string, id: string): OidcModelRow | null | undefined {
    return this.overlay.get(keyOf(kind, id))
  }

  /** A row found by uid among those this request wrote. */
  overlaidByUid(kind: string, uid: string): OidcModelRow | undefined {
    for (const row of this.overlay.values()) if (row && row.kind === kind && row.uid === uid) return row
    return undefined
  }

  /** A row read from the database, as this request sees it (undefined when revoked here). */
  read(kind: string, row: OidcModelRow | undefined): OidcModelRow | undefined {
    if (!row) return undefined
    const key = keyOf(kind, row.id)
    const own = this.overlay.get(key)
    if (own !== undefined) return own ?? undefined
    if (row.grantId && this.revoked.has(keyOf(kind, row.grantId))) return undefined
    this.seen.set(key, row)
    return row
  }

  upsert(row: OidcModelRow): void {
    this.overlay.set(keyOf(row.kind, row.id), row)
    this.writes.push({ op: 'upsert', row })
  }

  consume(kind: string, id: string, at: Date): void {
    const key = keyOf(kind, id)
    const seen = this.seen.get(key) ?? null
    const own = this.overlay.get(key)
    const current = own === undefined ? seen : own
    const payload = current ? consumedPayload(current.payload, at) : null
    if (current && payload) this.overlay.set(key, { ...current, payload, consumedAt: at })
    // After an own upsert of the same id the commit reads the row it wrote (the read one is stale).
    if (own === undefined) this.writes.push({ op: 'consume', kind, id, at, seen, payload })
    else this.writes.push({ op: 'consume', kind, id, at, seen: null, payload: null })
  }

  destroy(kind: string, id: string): void {
    this.overlay.set(keyOf(kind, id), null)
    this.writes.push({ op: 'destroy', kind, id })
  }

  revoke(kind: string, grantId: string): void {
    for (const [key, row] of this.overlay) if (row && row.kind === kind && row.grantId === grantId) this.overlay.set(key, null)
    this.revoked.add(keyOf(kind, grantId))
    this.writes.push({ op: 'revoke', kind, grantId })
  }
}
