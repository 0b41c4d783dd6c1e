/**
 * The floor for bench/oidc.ts's rotating refresh: the same work a Gatehouse refresh does, with
 * nothing around it. node:http; the client's secret checked against its stored SHA-256 hash; the
 * refresh token, its grant and the user read from Gatehouse's own tables (a data directory the
 * CLI has migrated); the presented token consumed, a new refresh token and an access token
 * stored, an audit entry written, all in one group commit per turn of the event loop (WAL,
 * synchronous=FULL, as Gatehouse runs SQLite); an RS256 ID token signed with one crypto.sign;
 * the same JSON answer. Raw better-sqlite3 statements, no framework, no model layer: what is
 * left of a refresh when everything Gatehouse adds (oidc-provider's models and claims, drizzle,
 * the request runner, async context) is taken away. Not a server anyone should run: it checks
 * only what the benchmark's requests need (no scopes, no sessions, no rate limit).
 *
 * Usage: node bin/run-ts.js bench/oidc-bare-server.ts <port> <data-dir> <chains> (port 0: one the system picks)
 * Prints `listening <port> <client id> <secret> <refresh token>,<refresh token>,…` (one token per chain).
 */
import { createHash, generateKeyPairSync, randomBytes, randomUUID, sign, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { parse } from 'node:querystring'
import { bannedNow } from '../server/core/bans.js'
import { SqliteDatabase } from '../server/db/sqlite-driver.js'

const port = Number(process.argv[2])
const dataDir = process.argv[3] as string
const chains = Number(process.argv[4] ?? 16)
/** The ID tokens' issuer: this server's address, known once it listens (port 0 asks the system for a free one). */
let issuer = `http://127.0.0.1:${port}/api/auth`
const CLIENT_ID = 'bare-client'
const SECRET = randomBytes(32).toString('base64url')
const secretHash = createHash('sha256').update(SECRET).digest()
const REFRESH_TTL = 14 * 86_400
const ACCESS_TTL = 3_600
const ID_TOKEN_TTL = 3_600

const db = new SqliteDatabase(join(dataDir, 'gatehouse.db'))
db.pragma('journal_mode = WAL')
db.pragma('synchronous = FULL')

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'bare-key' })).toString('base64url')

const findModel = db.prepare<[string, string], { payload: string; consumedAt: number | null; expiresAt: number | null }>(
  'select payload, consumedAt, expiresAt from oidcModel where kind = ? and id = ?',
)
const findUser = db.prepare<[string], { id: string; banned: number | null; banExpires: number | null }>(
  'select id, banned, banExpires from user where id = ?',
)
const insertModel = db.prepare(
  'insert into oidcModel (kind, id, payload, grantId, uid, userCode, gatehouseSessionId, consumedAt, expiresAt) values (?, ?, ?, ?, null, null, null, null, ?)',
)
const consume = db.prepare('update oidcModel set payload = ?, consumedAt = ? where kind = ? and id = ? and consumedAt is null')
const audit = db.prepare(
  'insert into auditEvent (type, outcome, actorUserId, targetUserId, target, ipAddress, userAgent, detail, createdAt, requestId) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
)
const begin = db.prepare('BEGIN IMMEDIATE')
const commit = db.prepare('COMMIT')
const rollback = db.prepare('ROLLBACK')

const seconds = (): number => Math.floor(Date.now() / 1000)
const tokenId = (): string => randomBytes(32).toString('base64url')

// One user, one grant, one refresh token per chain (each client of the benchmark rotates its own).
const userId = randomUUID()
const now = Date.now()
db.prepare('insert into user (id, name, email, emailVerified, createdAt, updatedAt) values (?, ?, ?, 1, ?, ?)').run(
  userId,
  'Bench',
  `bare-${userId}@example.com`,
  now,
  now,
)
const grantId = tokenId()
const grant = {
  iat: seconds(),
  exp: seconds() + REFRESH_TTL,
  accountId: userId,
  clientId: CLIENT_ID,
  kind: 'Grant',
  jti: grantId,
  openid: { scope: 'openid offline_access' },
}
insertModel.run('Grant', grantId, JSON.stringify(grant), grantId, now + REFRESH_TTL * 1000)
const firstTokens: string[] = []
for (let i = 0; i < chains; i++) {
  const jti = tokenId()
  const sid = randomUUID()
  const payload = {
    iat: seconds(),
    exp: seconds() + REFRESH_TTL,
    accountId: userId,
    acr: 'urn:gatehouse:password',
    authTime: seconds(),
    iiat: seconds(),
    grantId,
    gty: 'authorization_code',
    rotations: 0,
    scope: 'openid offline_access',
    sessionUid: tokenId(),
    sid,
    kind: 'RefreshToken',
    jti,
    clientId: CLIENT_ID,
  }
  insertModel.run('RefreshToken', jti, JSON.stringify(payload), grantId, now + REFRESH_TTL * 1000)
  firstTokens.push(jti)
}

interface Pending {
  writes: Array<() => void>
  answer: (ok: boolean) => void
}
let group: Pending[] = []

/** The writes of every request of this turn in one transaction; a request whose token was consumed meanwhile fails alone. */
function flush(): void {
  const batch = group
  group = []
  const failed = new Set<Pending>()
  begin.run()
  for (const pending of batch) {
    try {
      for (const write of pending.writes) write()
    } catch {
      failed.add(pending)
    }
  }
  if (failed.size > 0) {
    // Good enough for a floor: the benchmark's chains never collide.
    rollback.run()
    for (const pending of batch) pending.answer(false)
    return
  }
  commit.run()
  for (const pending of batch) pending.answer(true)
}

function answer(res: ServerResponse, status: number, body: object, requestId: string): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'cache-control': 'no-store',
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'x-request-id': requestId,
  })
  res.end(text)
}

const invalidGrant = { error: 'invalid_grant', error_description: 'grant request is invalid' }

function refresh(req: IncomingMessage, res: ServerResponse, body: string): void {
  const requestId = randomUUID()
  const params = parse(body)
  const basic = Buffer.from((req.headers.authorization ?? '').slice('Basic '.length), 'base64').toString('utf8')
  const colon = basic.indexOf(':')
  const presented = createHash('sha256')
    .update(basic.slice(colon + 1))
    .digest()
  if (basic.slice(0, colon) !== CLIENT_ID || !timingSafeEqual(presented, secretHash)) {
    answer(res, 401, { error: 'invalid_client', error_description: 'client authentication failed' }, requestId)
    return
  }
  const value = params.refresh_token
  if (params.grant_type !== 'refresh_token' || typeof value !== 'string') {
    answer(res, 400, invalidGrant, requestId)
    return
  }
  const row = findModel.get('RefreshToken', value)
  if (!row || row.consumedAt !== null || (row.expiresAt !== null && row.expiresAt <= Date.now())) {
    answer(res, 400, invalidGrant, requestId)
    return
  }
  const old = JSON.parse(row.payload) as Record<string, unknown> & { grantId: string; accountId: string; rotations: number }
  const grantRow = findModel.get('Grant', old.grantId)
  const grant = grantRow ? (JSON.parse(grantRow.payload) as { clientId: string; accountId: string; exp: number }) : undefined
  const user = findUser.get(old.accountId)
  const t = seconds()
  // The one ban rule (core/bans.ts), as Gatehouse's refresh applies it.
  const banned =
    user !== undefined &&
    bannedNow({ banned: user.banned === 1, banExpires: user.banExpires === null ? null : new Date(user.banExpires) }, Date.now())
  if (
    old.clientId !== CLIENT_ID ||
    !grant ||
    grant.clientId !== CLIENT_ID ||
    grant.accountId !== old.accountId ||
    grant.exp <= t ||
    !user ||
    banned
  ) {
    answer(res, 400, invalidGrant, requestId)
    return
  }

  const refreshToken = tokenId()
  const next = { ...old, iat: t, exp: t + REFRESH_TTL, rotations: old.rotations + 1, jti: refreshToken }
  const accessToken = tokenId()
  const access = {
    iat: t,
    exp: t + ACCESS_TTL,
    accountId: user.id,
    grantId: old.grantId,
    gty: old.gty,
    sessionUid: old.sessionUid,
    sid: old.sid,
    kind: 'AccessToken',
    jti: accessToken,
    clientId: CLIENT_ID,
    scope: old.scope,
  }
  const claims = {
    sub: user.id,
    acr: old.acr,
    auth_time: old.authTime,
    sid: old.sid,
    iat: t,
    exp: t + ID_TOKEN_TTL,
    aud: CLIENT_ID,
    iss: issuer,
  }
  const signingInput = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
  const idToken = `${signingInput}.${sign('sha256', Buffer.from(signingInput), privateKey).toString('base64url')}`
  const at = Date.now()
  if (group.length === 0) setImmediate(flush)
  group.push({
    writes: [
      () => {
        const consumed = consume.run(`${row.payload.slice(0, -1)},"consumed":${t}}`, at, 'RefreshToken', value)
        if (consumed.changes !== 1) throw new Error('consumed meanwhile')
      },
      () => insertModel.run('RefreshToken', refreshToken, JSON.stringify(next), old.grantId, at + REFRESH_TTL * 1000),
      () => insertModel.run('AccessToken', accessToken, JSON.stringify(access), old.grantId, at + ACCESS_TTL * 1000),
      () =>
        audit.run(
          'oidc.token-issued',
          'success',
          user.id,
          user.id,
          CLIENT_ID,
          req.socket.remoteAddress ?? null,
          req.headers['user-agent'] ?? null,
          '{"grantType":"refresh_token"}',
          at,
          requestId,
        ),
    ],
    answer: (ok) =>
      ok
        ? answer(
            res,
            200,
            {
              access_token: accessToken,
              expires_in: ACCESS_TTL,
              id_token: idToken,
              refresh_token: refreshToken,
              scope: old.scope,
              token_type: 'Bearer',
            },
            requestId,
          )
        : answer(res, 400, invalidGrant, requestId),
  })
}

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/api/auth/oauth2/token') {
    res.writeHead(404).end()
    return
  }
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => refresh(req, res, Buffer.concat(chunks).toString('utf8')))
})
server.keepAliveTimeout = 5_000
server.listen(port, '127.0.0.1', () => {
  const bound = (server.address() as AddressInfo).port
  issuer = `http://127.0.0.1:${bound}/api/auth`
  console.log(`listening ${bound} ${CLIENT_ID} ${SECRET} ${firstTokens.join(',')}`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
