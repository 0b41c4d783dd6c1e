import { createAuthClient } from 'better-auth/client'
import { twoFactorClient } from 'better-auth/client/plugins'
import { desc, eq } from 'drizzle-orm'
import { type TOTP, URI } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, mailOutbox, user } from '../../../server/db/schema.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { CookieJar, jarFetch, uniqueEmail } from '../../helpers/http.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'
import { firstRow } from '../../../server/db/storage.js'

/** The control panel's view of second factors: the panel service the desktop and browser panels call. */

let server: TestServer
let panel: PanelService
const PASSWORD = 'correct horse battery'

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

function client() {
  const jar = new CookieJar()
  return createAuthClient({
    baseURL: server.origin,
    plugins: [twoFactorClient()],
    fetchOptions: { customFetchImpl: jarFetch(server.origin, jar) },
  })
}

async function ok<T>(op: string, input: unknown): Promise<T> {
  const result = await panel.dispatch(op, input)
  if (!result.ok) throw new Error(`${op}: ${result.error.code} ${result.error.message}`)
  return result.data as T
}

describe('panel: second factors', () => {
  it('counts users with and without a second factor, shows a user’s factors, and resets them (audited, user told by mail)', async () => {
    const before = await ok<{ users: number; withAny: number; without: number }>('twoFactor.overview', {})
    const email = uniqueEmail('panel2fa')
    const c = client()
    const up = await c.signUp.email({ name: 'Panel', email, password: PASSWORD })
    const userId = up.data?.user.id as string
    const enable = (await c.twoFactor.enable({ password: PASSWORD })).data as { totpURI: string }
    await c.twoFactor.verifyTotp({ code: (URI.parse(enable.totpURI) as TOTP).generate({ timestamp: server.clock.now() }) })

    const after = await ok<{ users: number; withAny: number; without: number; withTotp: number }>('twoFactor.overview', {})
    expect(after.users).toBe(before.users + 1)
    expect(after.withAny).toBe(before.withAny + 1)
    expect(after.without).toBe(before.without)

    const factors = await ok<Record<string, unknown>>('twoFactor.userFactors', { userId })
    expect(factors).toEqual({
      twoFactorEnabled: true,
      totp: 'verified',
      backupCodesLeft: 10,
      trustedDevices: 0,
      graceDeadline: null,
      passkeys: [],
    })

    expect(await ok('twoFactor.reset', { userId })).toEqual({ success: true })
    expect(await ok('twoFactor.userFactors', { userId })).toMatchObject({ twoFactorEnabled: false, totp: 'none', backupCodesLeft: null })
    const mail = await firstRow(
      server.gatehouse.ctx.db.select().from(mailOutbox).where(eq(mailOutbox.to, email)).orderBy(desc(mailOutbox.createdAt)),
    )
    expect(mail?.kind).toBe('security-notice')
    expect(mail?.text).toContain('An administrator removed two-factor authentication')
    const audit = await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.targetUserId, userId))
    expect(audit.map((e) => e.type)).toContain('two-factor.reset')
    // The password alone signs in again.
    const plain = await client().signIn.email({ email, password: PASSWORD })
    expect(plain.data).toMatchObject({ redirect: false })
  })

  it('switches role enforcement from the panel and restarts a user’s grace period', async () => {
    expect(await ok('twoFactor.setEnforcement', { roles: ['admin'], gracePeriod: 600 })).toEqual({ success: true })
    try {
      expect((await ok<{ enforcement: unknown }>('twoFactor.overview', {})).enforcement).toEqual({ roles: ['admin'], gracePeriod: 600 })
      const email = uniqueEmail('boss')
      const up = await client().signUp.email({ name: 'Boss', email, password: PASSWORD })
      const userId = up.data?.user.id as string
      await server.gatehouse.ctx.db.update(user).set({ role: 'admin' }).where(eq(user.id, userId))
      await client().signIn.email({ email, password: PASSWORD })
      const deadline = (await ok<{ graceDeadline: number }>('twoFactor.userFactors', { userId })).graceDeadline
      expect(deadline).toBe(server.clock.now() + 600_000)
      server.clock.advanceSeconds(601)
      // Overdue: the sign-in opens a session to enrol with, marked so (no face vouches for it).
      expect((await client().signIn.email({ email, password: PASSWORD })).data).toMatchObject({
        twoFactorEnrollment: { required: true, overdue: true },
      })
      await ok('twoFactor.resetGrace', { userId })
      const again = await client().signIn.email({ email, password: PASSWORD })
      expect(again.error).toBeNull()
      expect(again.data).toMatchObject({ twoFactorEnrollment: { required: true } })
      expect(again.data).not.toHaveProperty('twoFactorEnrollment.overdue')
    } finally {
      await ok('twoFactor.setEnforcement', { roles: [] })
    }
  })

  it('refuses unknown users and passkeys', async () => {
    const result = await panel.dispatch('twoFactor.userFactors', { userId: 'nobody' })
    expect(result).toEqual({ ok: false, error: { code: 'USER_NOT_FOUND', message: 'User not found', status: 404 } })
    const email = uniqueEmail('nokey')
    const up = await client().signUp.email({ name: 'No key', email, password: PASSWORD })
    const remove = await panel.dispatch('passkey.remove', { userId: up.data?.user.id, passkeyId: 'nope' })
    expect(remove).toEqual({ ok: false, error: { code: 'PASSKEY_NOT_FOUND', message: 'Passkey not found', status: 404 } })
  })
})
