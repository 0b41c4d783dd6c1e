import { readFileSync } from 'node:fs'
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises'
import { bindingHolds, bindingMark } from './revocations.js'
import { createServer, type Server, type Socket } from 'node:net'
import { type SecureContext, TLSSocket, type Server as TlsServer, createSecureContext, createServer as createTlsServer } from 'node:tls'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { HashQueueFullError } from '../../crypto/hash-queue.js'
import type { GatehouseConfig } from '../../config/schema.js'
import { limitRequest, type RateLimitStore, type RateRule, rateLimitIdentity, ruleFor } from '../../core/rate-limit.js'
import { ListenerRefusal } from '../../feature.js'
import type { Logger } from '../../log.js'
import { appPasswordHolds, modifyOwnPassword, simpleBind } from './bind.js'
import { parseLdapAddress, tlsRequired } from './config.js'
import { DnError, normalizeDn } from './dn.js'
import { Snapshot, compareValue, entryAt, layoutOf, openSearch, matchedDnOf, uidOf, viewerOf, writeSelected } from './directory.js'
import { readsOf } from './reads.js'
import { LDAP_SEARCHES } from './metrics.js'
import {
  type Control,
  decodePagedValue,
  decodeRequest,
  encodeExtended,
  encodeNotice,
  encodePagedValue,
  encodeResult,
  frameLength,
  EntryWriter,
  frameSize,
  MessageTooLarge,
  OID,
  Op,
  type Request,
  ResultCode,
  WireError,
} from './wire.js'

/** The panel's bind-and-search test (probe.ts), in the module the listener loads. */
export { testBindAndSearch } from './probe.js'

/**
 * The LDAP listeners (node:net, and node:tls for LDAPS; StartTLS upgrades a plain connection):
 * frames in, one operation at a time per connection, answers out. A malformed or oversized
 * message closes its connection (logged once per connection); idle connections close after
 * `ldap.idleTimeout`; each client address may hold `ldap.maxConnectionsPerAddress` connections.
 * A connection reads no further while `MAX_PENDING` of its requests wait or its answers wait to be
 * taken by the client (backpressure): a client that sends and never reads costs a bounded memory.
 */

/** Requests of one connection queued at most; past them (or with answers unsent) reading stops. */
const MAX_PENDING = 16
/**
 * Entries encoded and written at a time by a long search; between two slices the search yields to
 * the event loop (or waits for the client to take what was written), so HTTP and the other
 * connections are answered between them: a slice costs a few milliseconds, a 500-entry page with
 * memberOf about ten times that.
 */
const SLICE_ENTRIES = 64

/**
 * The rule simple binds are limited by per source (`ldap.rateLimit`, by default the HTTP sign-in's:
 * the same function picks both, so a changed `rateLimit.strict` or `customRules` entry moves both).
 */
export function bindRateRule(config: GatehouseConfig): RateRule {
  return config.ldap.rateLimit ?? ruleFor(config.rateLimit, '/sign-in/email')
}

/** The longest a refused bind's answer waits (ms). */
const REFUSAL_PAUSE_MS = 1000

/**
 * A bind refused busy (the limiter, or the source's share of the password-hash queue), or a message
 * refused for `ldap.limits`, is answered after a pause (a second, at most the time the client was
 * told to wait). The connection reads nothing while a bind is unanswered (and nothing past
 * MAX_PENDING requests), so a flood gets one answer per connection per second
 * (`maxConnectionsPerAddress` of them) instead of as many cheap refusals as the server can write:
 * tens of thousands a second, the CPU HTTP needs (docs/BENCHMARKS.md "LDAP under attack").
 */
const refusalPause = (retryAfterSeconds: number): Promise<void> =>
  sleep(Math.max(0, Math.min(REFUSAL_PAUSE_MS, retryAfterSeconds * 1000)), undefined, { ref: false })

/** The rate limiter's count of one source's binds: its identity (IPv4 address, IPv6 /64) and this operation. */
const bindLimitKey = (address: string): string => `${rateLimitIdentity(address)}ldap:bind`

export type LdapRole = 'ldap' | 'ldaps'

/** Where a listener's connections go (the set serving them): a set taking the listener over repoints it. */
interface Route {
  /** Every TCP connection accepted (LDAPS: before its handshake). */
  connection: (socket: Socket) => void
  /** LDAPS: a connection once its handshake is done. */
  secure: (socket: TLSSocket) => void
}

/** One listener: its server, the address it was asked to take, and the set whose connections it serves. */
export interface Held {
  role: LdapRole
  server: Server
  address: string
  route: Route
  owner: LdapListeners
}

export interface LdapListeners {
  /** Where each listener is bound: `address` always, `ldaps` when configured. */
  bound: { address: { host: string; port: number }; ldaps?: { host: string; port: number } }
  /** Its listeners, by role. */
  held: Partial<Record<LdapRole, Held>>
  /** Connections open now on one listener. */
  connections(role: LdapRole): number
  /** Makes it the set serving: listeners it took over from the previous set (same address) route their connections here. */
  serve(): void
  /** Ends its connections and closes its listeners (not those a later set took over). */
  close(): Promise<void>
}

class Connection {
  private buffer: Buffer = Buffer.alloc(0)
  /** Pieces received after `buffer`, joined once the message they belong to is complete (one copy, not one per piece). */
  private pieces: Buffer[] = []
  private piecesLength = 0
  /** The size of the message `buffer` begins, once its header is there (0: unknown). */
  private awaited = 0
  private queue: Promise<void> = Promise.resolve()
  private closed = false
  /** The bound person's id (re-read at every operation, through the read cache); null: anonymous, or a binding a ban ended. */
  private boundId: string | null = null
  /** The revocation mark the binding was made at (revocations.ts). */
  private boundMark = 0
  private tls: boolean
  /** Requests queued and not yet answered. */
  private pending = 0
  /** A StartTLS request is queued: nothing after it is read before its answer (RFC 4511 §4.14.1). */
  private startingTls = false
  /** A bind is queued: nothing after it is read before its answer (RFC 4511 §4.2.1), so the next message is measured against the limit its outcome sets. */
  private binding = false
  /** The app password this connection is bound with (kept to re-check it at every operation), or null. */
  private appPassword: { secret: string; expiresAt: number | null } | null = null
  /** A message over `ldap.limits` was logged on this connection (once per connection). */
  private limitLogged = false

  constructor(
    private socket: Socket,
    private readonly ctx: AuthContext,
    private readonly logger: Logger,
    private readonly secure: SecureContext | null,
    encrypted: boolean,
    private readonly limits: (() => RateLimitStore) | undefined,
  ) {
    this.tls = encrypted
    this.attach(socket)
  }

  private attach(socket: Socket): void {
    socket.setNoDelay(true)
    socket.setTimeout(this.ctx.config().ldap.idleTimeout * 1000)
    socket.on('data', this.onData)
    socket.on('timeout', () => socket.destroy())
    socket.on('error', () => socket.destroy())
    socket.on('drain', () => {
      if (socket === this.socket) this.pump()
    })
    socket.on('close', () => {
      if (socket === this.socket) this.closed = true
    })
  }

  private meta(): RequestMeta {
    return { ipAddress: this.socket.remoteAddress ?? null, userAgent: 'ldap' }
  }

  private readonly onData = (chunk: Buffer): void => {
    // Closed (a message over the limit, a malformed one): what the client still sends is dropped, not gathered.
    if (this.closed) return
    this.pieces.push(chunk)
    this.piecesLength += chunk.length
    if (this.buffer.length + this.piecesLength < this.awaited) return
    this.buffer = this.buffer.length === 0 && this.pieces.length === 1 ? chunk : Buffer.concat([this.buffer, ...this.pieces])
    this.pieces = []
    this.piecesLength = 0
    this.pump()
  }

  /** Queues the complete requests buffered, as many as the limits allow; reading pauses while they hold. */
  private pump(): void {
    if (this.closed) return
    try {
      this.awaited = 0
      const { limits } = this.ctx.config().ldap
      // Before a bind (anonymous, or refused), a message may be smaller: nobody has said who pays for it.
      const maxBytes = this.boundId ? limits.maxMessageBytes.afterBind : limits.maxMessageBytes.beforeBind
      while (!this.startingTls && !this.binding && this.pending < MAX_PENDING && !this.socket.writableNeedDrain) {
        const length = frameLength(this.buffer, maxBytes)
        if (length === 0) {
          this.awaited = frameSize(this.buffer, maxBytes)
          break
        }
        const frame = this.buffer.subarray(0, length)
        this.buffer = this.buffer.subarray(length)
        const request = decodeRequest(frame, limits)
        if (request.op === 'extended' && request.name === OID.startTLS) this.startingTls = true
        if (request.op === 'bind') this.binding = true
        this.enqueue(request)
      }
    } catch (error) {
      this.fail(error)
      return
    }
    if (this.startingTls || this.binding || this.pending >= MAX_PENDING || this.socket.writableNeedDrain) this.socket.pause()
    else this.socket.resume()
  }

  private fail(error: unknown): void {
    if (this.closed) return
    // Nothing more is read: what the client still sends stays in the kernel until the socket goes.
    this.socket.pause()
    const why = error instanceof Error ? error.message : String(error)
    // A length prefix over the limit: the client is told why (a Notice of Disconnection), its bytes are not read.
    if (error instanceof MessageTooLarge) this.socket.write(encodeNotice(ResultCode.adminLimitExceeded, why))
    this.closed = true
    if (error instanceof WireError) this.logger.warn(`ldap: closed a connection from ${this.socket.remoteAddress}: ${why}`)
    else this.logger.error(`ldap: connection from ${this.socket.remoteAddress} failed`, error)
    if (error instanceof MessageTooLarge) this.socket.end(() => this.socket.destroy())
    else this.socket.destroy()
  }

  private enqueue(request: Request): void {
    this.pending++
    this.queue = this.queue.then(async () => {
      try {
        if (!this.closed) await this.handle(request)
      } catch (error) {
        this.fail(error)
      } finally {
        this.pending--
        if (request.op === 'bind') this.binding = false
        this.pump()
      }
    })
  }

  private send(bytes: Buffer): void {
    if (!this.closed) this.socket.write(bytes)
  }

  /**
   * Whether the credential this connection bound with still opens it: an app password revoked or
   * expired since ends the binding (the operation is answered invalidCredentials, later ones run
   * anonymous until a new bind). On SQLite answered from the bind memo while nothing was written
   * since it was made; else one indexed read of the person's app passwords and a keyed hash, per
   * operation, never per entry (`appPasswordHolds`). A ban or deletion ends it through `viewer`.
   */
  private async credentialHolds(): Promise<boolean> {
    const held = this.appPassword
    if (!this.boundId) return true
    if (!held) {
      // The main password: a change, reset, ban, revoke-sessions or deletion since the bind ends it.
      if (bindingHolds(this.ctx, this.boundId, this.boundMark)) return true
      this.boundId = null
      return false
    }
    const expired = held.expiresAt !== null && this.ctx.clock.now() >= held.expiresAt
    if (!expired && (await appPasswordHolds(this.ctx, this.boundId, held.secret))) return true
    this.boundId = null
    this.appPassword = null
    return false
  }

  private async viewer() {
    const user = this.boundId ? await readsOf(this.ctx).user(this.boundId) : null
    const viewer = viewerOf(this.ctx, user)
    // Banned or deleted: the binding ends for good, as a ban revokes the person's sessions (lifting it brings neither back).
    if (!viewer.user) this.boundId = null
    return viewer
  }

  private async handle(request: Request): Promise<void> {
    const { id } = request
    // A critical control this operation does not know is refused, the operation not performed (RFC 4511 §4.1.11);
    // the paged-results control belongs to a search (checked there).
    if (
      request.op !== 'search' &&
      request.op !== 'unbind' &&
      request.op !== 'abandon' &&
      request.op !== 'refused' &&
      request.controls.some((c) => c.critical)
    ) {
      const code = ResultCode.unavailableCriticalExtension
      if (request.op === 'bind') this.boundId = null
      if (request.op === 'extended') {
        this.startingTls = false // a refused StartTLS: reading goes on in plain text
        return this.send(encodeExtended(id, code, 'unsupported critical control', null, null))
      }
      const tag = request.op === 'bind' ? Op.bindResponse : request.op === 'compare' ? Op.compareResponse : request.responseTag
      return this.send(encodeResult(id, tag, code, 'unsupported critical control'))
    }
    switch (request.op) {
      case 'refused': {
        if (!this.limitLogged) {
          this.limitLogged = true
          this.logger.warn(`ldap: refused a message from ${this.socket.remoteAddress}: ${request.reason} (ldap.limits)`)
        }
        if (request.responseTag === Op.bindResponse) this.boundId = null
        // Answered after the same pause as a refused bind: this connection's next requests wait
        // behind it (and past MAX_PENDING it reads nothing), so a client sending 1 MiB filters gets
        // one refusal a second instead of having hundreds of megabytes a second read and measured.
        await refusalPause(1)
        if (request.responseTag === Op.extendedResponse) {
          this.startingTls = false
          return this.send(encodeExtended(id, ResultCode.adminLimitExceeded, request.reason, null, null))
        }
        if (request.responseTag !== null) this.send(encodeResult(id, request.responseTag, ResultCode.adminLimitExceeded, request.reason))
        return
      }
      case 'unbind':
        this.closed = true
        this.socket.end()
        return
      case 'abandon':
        return
      case 'write':
        this.send(encodeResult(id, request.responseTag, ResultCode.unwillingToPerform, 'the directory is read-only'))
        return
      case 'bind': {
        this.boundId = null
        if (request.version !== 3) return this.send(encodeResult(id, Op.bindResponse, ResultCode.protocolError, 'LDAPv3 only'))
        if (!request.password) return this.send(encodeResult(id, Op.bindResponse, ResultCode.authMethodNotSupported, 'simple bind only'))
        // A password in clear where TLS is required: refused before it is looked at (no hash, no count, no audit).
        if (request.password.length > 0 && !this.tls && tlsRequired(this.ctx.config().ldap)) {
          return this.send(encodeResult(id, Op.bindResponse, ResultCode.confidentialityRequired, 'use StartTLS or LDAPS'))
        }
        // A password to check: counted per source by the HTTP limiter first; over the limit, busy
        // (51) and the password is not looked at (spraying over LDAP no faster than over HTTP).
        const config = this.ctx.config()
        const address = this.socket.remoteAddress
        const store = request.password.length > 0 && config.rateLimit.enabled && address ? this.limits?.() : undefined
        const limitKey = store && address ? bindLimitKey(address) : null
        if (store && limitKey) {
          const tried = { via: 'ldap', operation: 'bind', dn: request.name.slice(0, 256) }
          const decision = await limitRequest(this.ctx, store, limitKey, bindRateRule(config), this.meta(), tried)
          if (!decision.allowed) {
            const why = `too many failed binds from your address; try again in ${decision.retryAfterSeconds} s`
            await refusalPause(decision.retryAfterSeconds)
            return this.send(encodeResult(id, Op.bindResponse, ResultCode.busy, why))
          }
        }
        let outcome: Awaited<ReturnType<typeof simpleBind>>
        try {
          outcome = await simpleBind(this.ctx, request.name, request.password, this.meta())
        } catch (error) {
          // Password hashing is saturated (the HTTP API answers 503): busy, and the client may try again.
          if (error instanceof HashQueueFullError) {
            if (store && limitKey) await store.release(limitKey) // no password was checked
            await refusalPause(1)
            return this.send(encodeResult(id, Op.bindResponse, ResultCode.busy, 'server busy'))
          }
          throw error
        }
        // Only failed binds use up the allowance: a client that binds right at every request (Apache,
        // Nextcloud, a NAS) is never limited, a guesser is.
        if (store && limitKey && outcome.user) await store.release(limitKey)
        this.boundId = outcome.user?.id ?? null
        this.boundMark = bindingMark(this.ctx)
        // Bound with an app password? Then it is re-checked at every operation (revoked, expired: the binding ends).
        this.appPassword =
          outcome.user && outcome.appPassword
            ? { secret: request.password.toString('utf8'), expiresAt: outcome.appPassword.expiresAt }
            : null
        this.send(encodeResult(id, Op.bindResponse, outcome.code))
        return
      }
      case 'search':
        await readsOf(this.ctx).begin()
        if (!(await this.credentialHolds()))
          return this.send(encodeResult(id, Op.searchResultDone, ResultCode.invalidCredentials, 'bind again'))
        return this.search(request)
      case 'compare':
        await readsOf(this.ctx).begin()
        if (!(await this.credentialHolds()))
          return this.send(encodeResult(id, Op.compareResponse, ResultCode.invalidCredentials, 'bind again'))
        return this.compare(request)
      case 'extended':
        await readsOf(this.ctx).begin()
        if (request.name !== OID.startTLS && !(await this.credentialHolds())) {
          return this.send(encodeExtended(id, ResultCode.invalidCredentials, 'bind again', null, null))
        }
        return this.extended(request)
    }
  }

  private async search(request: Extract<Request, { op: 'search' }>): Promise<void> {
    const { id } = request
    const paged = request.controls.find((c) => c.type === OID.pagedResults)
    const unknownCritical = request.controls.find((c) => c.critical && c.type !== OID.pagedResults)
    if (unknownCritical) return this.send(encodeResult(id, Op.searchResultDone, ResultCode.unavailableCriticalExtension))
    const answer = await openSearch(this.ctx, await this.viewer(), request, this.secure !== null)
    if (!('code' in answer && answer.code === ResultCode.invalidDNSyntax)) this.ctx.events.count(LDAP_SEARCHES)
    if ('code' in answer) return this.send(encodeResult(id, Op.searchResultDone, answer.code, '', undefined, answer.matchedDN))
    // The entries come from the directory's cursor in slices (directory.ts SearchCursor): a page
    // resumes at its cookie's place, and a long answer yields to the event loop between slices.
    const { cursor } = answer
    let pageSize = Number.POSITIVE_INFINITY
    let page: { size: number; cookie: Buffer } | null = null
    if (paged) {
      try {
        page = decodePagedValue(paged.value)
      } catch {
        return this.send(encodeResult(id, Op.searchResultDone, ResultCode.protocolError, 'malformed paged results control'))
      }
      // A cookie that is none of this search's: nothing more (as past the end).
      if (page.cookie.length > 0) cursor.seek(page.cookie)
      pageSize = page.size
    }
    // Without paging, at most ldap.maxUnpagedEntries (a client asking fewer gets fewer); paging is the way to read everything.
    const unpagedMax = paged ? 0 : this.ctx.config().ldap.maxUnpagedEntries
    const limit = unpagedMax > 0 && (request.sizeLimit === 0 || request.sizeLimit > unpagedMax) ? unpagedMax : request.sizeLimit
    const wanted = limit > 0 ? Math.min(pageSize, limit) : pageSize
    // The entries and the result go out in one write when they fit in one slice (the usual one-entry
    // answer); a slice's entries are written into one buffer (wire.ts EntryWriter).
    const writer = new EntryWriter(id)
    let sent = 0
    let code: number = ResultCode.success
    while (sent < wanted && !this.closed) {
      const slice = await cursor.take(Math.min(SLICE_ENTRIES, wanted - sent))
      for (const entry of slice) writeSelected(writer, entry, request.attributes, request.typesOnly)
      sent += slice.length
      if (slice.length < SLICE_ENTRIES || sent >= wanted) break
      this.send(writer.take())
      // Another slice follows: the event loop turns first (the entries' promises settle as
      // microtasks, which alone would build a whole page in one task), or the client takes what was written.
      if (this.socket.writableNeedDrain) await new Promise<void>((resolve) => this.socket.once('drain', resolve).once('close', resolve))
      else await yieldToLoop()
    }
    if (limit > 0 && sent >= limit && limit < pageSize && (await cursor.more())) code = ResultCode.sizeLimitExceeded
    let doneControls: Control[] | undefined
    if (page) {
      const next = page.size > 0 && (await cursor.more()) ? cursor.cookie() : Buffer.alloc(0)
      // The size is an estimate, 0 when unknown (RFC 2696): counting would read every candidate.
      doneControls = [{ type: OID.pagedResults, critical: false, value: encodePagedValue(0, next) }]
    }
    const done = encodeResult(id, Op.searchResultDone, code, '', doneControls)
    this.send(writer.take(done))
  }

  private async compare(request: Extract<Request, { op: 'compare' }>): Promise<void> {
    const snapshot = new Snapshot(this.ctx, await this.viewer())
    let entry: Awaited<ReturnType<typeof entryAt>>
    try {
      entry = await entryAt(snapshot, request.entry, this.secure !== null)
    } catch (error) {
      if (error instanceof DnError) return this.send(encodeResult(request.id, Op.compareResponse, ResultCode.invalidDNSyntax))
      throw error
    }
    if (!entry) {
      const matched = matchedDnOf(snapshot.layout, snapshot.viewer, request.entry)
      return this.send(encodeResult(request.id, Op.compareResponse, ResultCode.noSuchObject, '', undefined, matched))
    }
    const answer = compareValue(entry, request.attribute, request.value)
    const code = answer === undefined ? ResultCode.noSuchAttribute : answer ? ResultCode.compareTrue : ResultCode.compareFalse
    this.send(encodeResult(request.id, Op.compareResponse, code))
  }

  private async extended(request: Extract<Request, { op: 'extended' }>): Promise<void> {
    const { id } = request
    if (request.name === OID.whoami) {
      const viewer = await this.viewer()
      const dn = viewer.user ? normalizeDn(layoutOf(this.ctx).personDn(uidOf(viewer.user))) : ''
      this.send(encodeExtended(id, ResultCode.success, '', null, Buffer.from(dn ? `dn:${dn}` : '', 'utf8')))
      return
    }
    if (request.name === OID.startTLS) {
      if (!this.secure || this.tls) {
        this.send(encodeExtended(id, ResultCode.unavailable, 'StartTLS is not available', OID.startTLS, null))
        this.startingTls = false
        return
      }
      this.send(encodeExtended(id, ResultCode.success, '', OID.startTLS, null))
      const plain = this.socket
      plain.removeListener('data', this.onData)
      const upgraded = new TLSSocket(plain, { isServer: true, secureContext: this.secure })
      this.socket = upgraded
      this.tls = true
      this.buffer = Buffer.alloc(0)
      this.pieces = []
      this.piecesLength = 0
      this.awaited = 0
      this.startingTls = false
      this.attach(upgraded)
      plain.resume()
      return
    }
    if (request.name === OID.passwordModify) {
      const viewer = await this.viewer()
      let outcome: Awaited<ReturnType<typeof modifyOwnPassword>>
      try {
        outcome = await modifyOwnPassword(this.ctx, viewer.user, request.value, this.meta())
      } catch (error) {
        if (error instanceof HashQueueFullError) return this.send(encodeExtended(id, ResultCode.busy, 'server busy', null, null))
        throw error
      }
      this.send(encodeExtended(id, outcome.code, outcome.message, null, null))
      return
    }
    // An unknown request name: protocolError (RFC 4511 §4.12).
    this.send(encodeExtended(id, ResultCode.protocolError, 'unsupported extended operation', null, null))
  }
}

function listen(server: Server, address: string, field: string): Promise<{ host: string; port: number }> {
  const { host, port } = parseLdapAddress(address)
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) =>
      reject(new ListenerRefusal(field, `${field}: cannot listen on ${address} (${error.code ?? error.message}); choose another ${field}`))
    server.once('error', failed)
    server.listen(port, host, () => {
      server.off('error', failed)
      resolve(boundOf(server, host, port))
    })
  })
}

const boundOf = (server: Server, host: string, port: number): { host: string; port: number } => {
  const bound = server.address()
  return { host, port: bound && typeof bound === 'object' ? bound.port : port }
}

/** The certificate and key `ldap.tls` names, read now; a ListenerRefusal on `ldap.tls` when they cannot be loaded. */
function loadTls(conf: GatehouseConfig['ldap']): { pem: { cert: Buffer; key: Buffer } | null; secure: SecureContext | null } {
  if (!conf.tls) return { pem: null, secure: null }
  try {
    const pem = { cert: readFileSync(conf.tls.cert), key: readFileSync(conf.tls.key) }
    return { pem, secure: createSecureContext(pem) }
  } catch (error) {
    throw new ListenerRefusal('ldap.tls', `ldap.tls: cannot load the certificate and key (${(error as Error).message})`)
  }
}

/** One listener set's open connections (by role) and the rule admitting a new one under `ldap.maxConnections*`. */
function connectionLimits(ctx: AuthContext): { sockets: Map<Socket, LdapRole>; admit(socket: Socket, role: LdapRole): boolean } {
  /** Each source's open connections, oldest first. */
  const perAddress = new Map<string, Set<Socket>>()
  const sockets = new Map<Socket, LdapRole>()
  const forget = (socket: Socket, from: string): void => {
    if (!sockets.delete(socket)) return
    const held = perAddress.get(from)
    held?.delete(socket)
    if (held?.size === 0) perAddress.delete(from)
  }
  /**
   * With every place taken: the oldest connection of the source holding the most, if that source
   * would still hold more than the newcomer's after it (`count`: the newcomer's source's connections,
   * itself included). Idle connections from a few addresses then make room for another address,
   * never the reverse, and sources holding one connection each are not cycled.
   */
  const evictable = (count: number): { socket: Socket; from: string } | null => {
    let busiest: [string, Set<Socket>] | null = null
    for (const entry of perAddress) if (!busiest || entry[1].size > busiest[1].size) busiest = entry
    if (!busiest || busiest[1].size <= count) return null
    const [from, held] = busiest
    const socket = held.values().next().value as Socket
    return { socket, from }
  }
  /**
   * Counts a TCP connection towards its source's limit (an IPv4 address, an IPv6 /64: the HTTP
   * limiter's grouping) and the global one from its first byte (LDAPS: before the handshake);
   * false: refused with a Notice of Disconnection (unavailable, 52) in clear, then closed. Over the
   * global one, the busiest source's oldest connection is closed instead when that source holds
   * more (evictable).
   */
  const admit = (socket: Socket, role: LdapRole): boolean => {
    const clear = role === 'ldap'
    const from = rateLimitIdentity(socket.remoteAddress ?? '')
    const count = perAddress.get(from)?.size ?? 0
    const { maxConnectionsPerAddress, maxConnections } = ctx.config().ldap
    const victim = count < maxConnectionsPerAddress && sockets.size >= maxConnections ? evictable(count + 1) : null
    if (count >= maxConnectionsPerAddress || (sockets.size >= maxConnections && !victim)) {
      const why = count >= maxConnectionsPerAddress ? 'too many connections from your address' : 'too many connections'
      socket.on('error', () => socket.destroy())
      // In clear on the plain listener; LDAPS has no TLS session yet to carry it: closed.
      if (clear) {
        socket.end(encodeNotice(ResultCode.unavailable, why))
        setTimeout(() => socket.destroy(), 2_000).unref()
      } else socket.destroy()
      return false
    }
    if (victim) {
      // Closed without a notice: it may carry TLS by now (StartTLS, LDAPS), where clear bytes do not belong.
      forget(victim.socket, victim.from)
      victim.socket.destroy()
    }
    const held = perAddress.get(from)
    if (held) held.add(socket)
    else perAddress.set(from, new Set([socket]))
    sockets.set(socket, role)
    socket.once('close', () => forget(socket, from))
    return true
  }
  return { sockets, admit }
}

/**
 * Opens the listeners `conf` asks for (by default `ldap.*` now). A listener whose address is the one
 * `previous` holds under the same role is taken over rather than bound again (its port is ours):
 * it serves this set's connections once `serve()` is called. Every other address is bound here,
 * before `previous` is closed, so a change to an address that cannot be bound leaves `previous`
 * serving. Rejects with a ListenerRefusal naming the field when one cannot start, having closed
 * what it bound.
 */
export async function startLdap(
  ctx: AuthContext,
  logger: Logger,
  limits?: () => RateLimitStore,
  conf: GatehouseConfig['ldap'] = ctx.config().ldap,
  previous?: LdapListeners,
): Promise<LdapListeners> {
  layoutOf(ctx)
  const { pem, secure } = loadTls(conf)
  const { sockets, admit } = connectionLimits(ctx)
  /** What this set's listeners do with a connection: where a taken-over listener's routes point once it serves. */
  const routes: Record<LdapRole, Route> = {
    ldap: {
      connection: (socket) => {
        if (admit(socket, 'ldap')) new Connection(socket, ctx, logger, secure, false, limits)
      },
      secure: () => undefined,
    },
    ldaps: {
      // The TCP connection, before its handshake: counted (and closed with the listeners) from there.
      connection: (socket) => {
        admit(socket, 'ldaps')
      },
      secure: (socket) => {
        new Connection(socket, ctx, logger, secure, true, limits)
      },
    },
  }
  const held: Partial<Record<LdapRole, Held>> = {}
  const taken: Held[] = []
  const set: LdapListeners = {
    bound: { address: { host: '', port: 0 } },
    held,
    connections: (role) => [...sockets.values()].filter((r) => r === role).length,
    serve() {
      for (const listener of taken) {
        listener.route.connection = routes[listener.role].connection
        listener.route.secure = routes[listener.role].secure
        if (listener.role === 'ldaps' && pem) (listener.server as TlsServer).setSecureContext(pem)
        listener.owner = set
      }
    },
    close: async () => {
      for (const socket of sockets.keys()) socket.destroy()
      const own = Object.values(held).filter((listener) => listener.owner === set)
      await Promise.all(
        own.map(({ server }) => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()))),
      )
    },
  }
  /** The listener of `role` on `address`: `previous`'s when it holds that address, else a new one bound now. */
  const open = async (role: LdapRole, address: string, field: string) => {
    const theirs = previous?.held[role]
    if (theirs && theirs.address === address && theirs.server.listening) {
      held[role] = theirs
      taken.push(theirs)
      const { host, port } = parseLdapAddress(address)
      return boundOf(theirs.server, host, port)
    }
    const route: Route = { ...routes[role] }
    const server =
      role === 'ldap'
        ? createServer((socket) => route.connection(socket))
        : createTlsServer(pem ?? {}, (socket) => route.secure(socket)).on('connection', (socket: Socket) => route.connection(socket))
    held[role] = { role, server, address, route, owner: set }
    return listen(server, address, field)
  }
  try {
    set.bound.address = await open('ldap', conf.address, 'ldap.address')
    if (conf.ldapsAddress && pem) set.bound.ldaps = await open('ldaps', conf.ldapsAddress, 'ldap.ldapsAddress')
    return set
  } catch (error) {
    await set.close()
    throw error
  }
}
