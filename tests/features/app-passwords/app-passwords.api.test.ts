import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { appPassword, auditEvent, user } from '../../../server/db/schema.js'
import { hasSecondFactor, verifyAppPassword } from '../../../server/features/app-passwords/verify.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { signUp, type SignedUp } from '../../helpers/http.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/** App passwords: the owner's API, the verifier the LDAP server calls, and the panel's operations. */

let server: TestServer
let panel: PanelService

beforeAll(async () => {
  server = await startTestServer({ config: { twoFactor: { enabled: true } } })
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
})
afterAll(() => server.close())

interface Created {
  id: string
  name: string
  password: string
  hint: string
  createdAt: number
  expiresAt: number | null
}
interface Listed {
  appPasswords: Array<{
    id: string
    name: string
    hint: string
    createdAt: number
    expiresAt: number | null
    lastUsedAt: number | null
    expired: boolean
  }>
}

async function create(who: SignedUp, body: Record<string, unknown>): Promise<Created> {
  const res = await who.client.post<Created>('/app-password/create', body)
  expect(res.status, res.text).toBe(200)
  return res.body
}

const auditOf = (id: string) => server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.target, id))

describe('app passwords: API', () => {
  it('creates one shown once, lists it without the secret or hash, verifies it and records its last use', async () => {
    const who = await signUp(server.base)
    const created = await create(who, { name: 'NAS' })
    expect(created).toMatchObject({ name: 'NAS', expiresAt: null, createdAt: server.clock.now() })
    expect(created.password).toMatch(/^[A-Za-z0-9]{28}$/)
    expect(created.hint).toBe(created.password.slice(-4))

    const listed = await who.client.get<Listed>('/app-password/list')
    expect(listed.status).toBe(200)
    expect(listed.body).toEqual({
      appPasswords: [
        {
          id: created.id,
          name: 'NAS',
          hint: created.hint,
          createdAt: created.createdAt,
          expiresAt: null,
          lastUsedAt: null,
          expired: false,
        },
      ],
    })
    expect(listed.text).not.toContain(created.password)

    // Stored as a keyed hash only.
    const [row] = await server.gatehouse.ctx.db.select().from(appPassword).where(eq(appPassword.id, created.id))
    expect(row?.hash).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(JSON.stringify(row)).not.toContain(created.password)

    const ctx = server.gatehouse.ctx
    expect(await verifyAppPassword(ctx, who.user.id, created.password)).toBe(true)
    expect(await verifyAppPassword(ctx, who.user.id, `${created.password}x`)).toBe(false)
    expect(await verifyAppPassword(ctx, who.user.id, created.password.slice(0, -1))).toBe(false)
    expect(await verifyAppPassword(ctx, who.user.id, '')).toBe(false)
    expect(await verifyAppPassword(ctx, who.user.id, who.password)).toBe(false)
    const usedAt = server.clock.now()
    const after = await who.client.get<Listed>('/app-password/list')
    expect(after.body.appPasswords[0]?.lastUsedAt).toBe(usedAt)

    // Another person's secret does not open this account, nor this one theirs.
    const other = await signUp(server.base)
    expect(await verifyAppPassword(ctx, other.user.id, created.password)).toBe(false)

    // A later use moves lastUsedAt (written at most once a minute).
    server.clock.advance(30_000)
    expect(await verifyAppPassword(ctx, who.user.id, created.password)).toBe(true)
    expect((await who.client.get<Listed>('/app-password/list')).body.appPasswords[0]?.lastUsedAt).toBe(usedAt)
    server.clock.advance(31_000)
    expect(await verifyAppPassword(ctx, who.user.id, created.password)).toBe(true)
    expect((await who.client.get<Listed>('/app-password/list')).body.appPasswords[0]?.lastUsedAt).toBe(server.clock.now())

    const audit = await auditOf(created.id)
    expect(audit.map((e) => e.type)).toEqual(['app-password.created'])
    expect(audit[0]).toMatchObject({ actorUserId: who.user.id, targetUserId: who.user.id })
    expect(JSON.stringify(audit)).not.toContain(created.password)
    expect(JSON.stringify(audit)).not.toContain(row?.hash)
  })

  it('expires: verifies until expiresAt, not after, and the list says so', async () => {
    const who = await signUp(server.base)
    const created = await create(who, { name: 'Mail client', expiresIn: 3600 })
    expect(created.expiresAt).toBe(server.clock.now() + 3_600_000)
    const ctx = server.gatehouse.ctx
    server.clock.advance(3_599_000)
    expect(await verifyAppPassword(ctx, who.user.id, created.password)).toBe(true)
    server.clock.advance(1_000)
    expect(await verifyAppPassword(ctx, who.user.id, created.password)).toBe(false)
    const listed = await who.client.get<Listed>('/app-password/list')
    expect(listed.body.appPasswords).toMatchObject([{ id: created.id, expired: true }])
  })

  it('revokes: the secret stops working, audited without it; another person’s id is refused', async () => {
    const who = await signUp(server.base)
    const other = await signUp(server.base)
    const a = await create(who, { name: 'Jellyfin' })
    const b = await create(who, { name: 'Nextcloud' })
    const ctx = server.gatehouse.ctx

    const refused = await other.client.post('/app-password/revoke', { id: a.id })
    expect(refused.status).toBe(404)
    expect(refused.body).toEqual({ code: 'APP_PASSWORD_NOT_FOUND', message: 'App password not found' })
    expect(await verifyAppPassword(ctx, who.user.id, a.password)).toBe(true)

    const revoked = await who.client.post('/app-password/revoke', { id: a.id })
    expect([revoked.status, revoked.body]).toEqual([200, { success: true }])
    expect(await verifyAppPassword(ctx, who.user.id, a.password)).toBe(false)
    expect(await verifyAppPassword(ctx, who.user.id, b.password)).toBe(true)
    expect((await who.client.get<Listed>('/app-password/list')).body.appPasswords.map((p) => p.name)).toEqual(['Nextcloud'])
    expect((await other.client.get<Listed>('/app-password/list')).body.appPasswords).toEqual([])

    const again = await who.client.post('/app-password/revoke', { id: a.id })
    expect(again.status).toBe(404)
    const audit = await auditOf(a.id)
    expect(audit.map((e) => [e.type, e.actorUserId])).toEqual([
      ['app-password.created', who.user.id],
      ['app-password.revoked', who.user.id],
    ])
    expect(JSON.stringify(audit)).not.toContain(a.password)
  })

  it('needs a session (fresh to create) and validates its input', async () => {
    const anonymous = await fetch(`${server.base}/app-password/list`)
    expect(anonymous.status).toBe(401)
    const who = await signUp(server.base)
    for (const body of [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(65) },
      { name: 'ok', expiresIn: 10 },
      { name: 'ok', expiresIn: 1.5 },
    ]) {
      const res = await who.client.post('/app-password/create', body)
      expect(res.status, JSON.stringify(body)).toBe(400)
    }
    // A session older than session.freshAge (one day) may list and revoke, not create.
    server.clock.advance(86_401_000)
    const stale = await who.client.post('/app-password/create', { name: 'late' })
    expect([stale.status, (stale.body as { code: string }).code]).toEqual([403, 'SESSION_NOT_FRESH'])
    expect((await who.client.get<Listed>('/app-password/list')).status).toBe(200)
  })

  it('deleting the user deletes their app passwords', async () => {
    const who = await signUp(server.base)
    const created = await create(who, { name: 'gone' })
    await server.gatehouse.ctx.db.delete(user).where(eq(user.id, who.user.id))
    expect(await server.gatehouse.ctx.db.select().from(appPassword).where(eq(appPassword.id, created.id))).toEqual([])
  })

  it('a second factor is two-factor enrolled while two-factor is on (the sign-in pipeline’s rule)', () => {
    const ctx = server.gatehouse.ctx
    expect(hasSecondFactor(ctx, { twoFactorEnabled: true })).toBe(true)
    expect(hasSecondFactor(ctx, { twoFactorEnabled: false })).toBe(false)
    expect(hasSecondFactor(ctx, { twoFactorEnabled: null })).toBe(false)
  })
})

describe('app passwords: panel', () => {
  async function ok<T>(op: string, input: unknown): Promise<T> {
    const result = await panel.dispatch(op, input)
    if (!result.ok) throw new Error(`${op}: ${result.error.code} ${result.error.message}`)
    return result.data as T
  }

  it('lists a user’s app passwords without secrets and revokes one (audited as the operator acting on the user)', async () => {
    const who = await signUp(server.base)
    const created = await create(who, { name: 'Proxmox' })
    const listed = await ok<Listed>('appPasswords.list', { userId: who.user.id })
    expect(listed.appPasswords).toMatchObject([{ id: created.id, name: 'Proxmox', hint: created.hint }])
    expect(JSON.stringify(listed)).not.toContain(created.password)

    const other = await signUp(server.base)
    const wrong = await panel.dispatch('appPasswords.revoke', { userId: other.user.id, id: created.id })
    expect(wrong.ok).toBe(false)
    if (!wrong.ok) expect(wrong.error.code).toBe('APP_PASSWORD_NOT_FOUND')
    const missing = await panel.dispatch('appPasswords.list', { userId: 'nobody' })
    expect(!missing.ok && missing.error.code).toBe('USER_NOT_FOUND')

    expect(await ok('appPasswords.revoke', { userId: who.user.id, id: created.id })).toEqual({ success: true })
    expect(await verifyAppPassword(server.gatehouse.ctx, who.user.id, created.password)).toBe(false)
    expect((await ok<Listed>('appPasswords.list', { userId: who.user.id })).appPasswords).toEqual([])
    const revoked = (await auditOf(created.id)).find((e) => e.type === 'app-password.revoked')
    expect(revoked).toMatchObject({ targetUserId: who.user.id, actorUserId: null })
    expect(JSON.stringify(revoked)).not.toContain(created.password)
  })
})
