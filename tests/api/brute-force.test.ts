import { and, count, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clearAccountLock, listAccountLocks } from '../../server/core/throttle.js'
import { auditEvent } from '../../server/db/schema.js'
import { firstRow } from '../../server/db/storage.js'
import { ERRORS, HttpClient, signUp, uniqueEmail, statusAndBody } from '../helpers/http.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

const attempt = (email: string, password: string, ip = '203.0.113.1') =>
  new HttpClient(server.base, { headers: { 'x-forwarded-for': ip } }).post('/sign-in/email', { email, password })

describe('per-account throttling of password checks', () => {
  it('locks an account for 15 minutes after 10 failures, whatever the client address', async () => {
    const { email, password, user } = await signUp(server.base)
    for (let i = 0; i < 10; i++)
      expect(statusAndBody(await attempt(email, 'wrong-password', `198.51.100.${i}`))).toEqual([401, ERRORS.INVALID_EMAIL_OR_PASSWORD])
    const locked = await attempt(email, password, '192.0.2.99')
    expect(statusAndBody(locked)).toEqual([429, ERRORS.TOO_MANY_REQUESTS])
    expect(locked.body).toEqual({ code: 'TOO_MANY_REQUESTS', message: 'Too many requests. Please try again later.' })
    expect(locked.headers.get('x-retry-after')).toBe('900')

    const events = await firstRow(
      server.gatehouse.ctx.db
        .select({ n: count() })
        .from(auditEvent)
        .where(and(eq(auditEvent.type, 'security.account-locked'), eq(auditEvent.targetUserId, user.id))),
    )
    expect(events?.n).toBe(1)

    server.clock.advanceSeconds(899)
    expect(statusAndBody(await attempt(email, password))).toEqual([429, ERRORS.TOO_MANY_REQUESTS])
    server.clock.advanceSeconds(2)
    expect((await attempt(email, password)).status).toBe(200)
  })

  it('answers an unknown email exactly like a known one', async () => {
    const email = uniqueEmail('ghost')
    for (let i = 0; i < 10; i++)
      expect(statusAndBody(await attempt(email, 'wrong-password'))).toEqual([401, ERRORS.INVALID_EMAIL_OR_PASSWORD])
    const locked = await attempt(email, 'wrong-password')
    expect(statusAndBody(locked)).toEqual([429, ERRORS.TOO_MANY_REQUESTS])
    expect(locked.headers.get('x-retry-after')).toBe('900')
  })

  it('admits no more than 10 checks out of 50 parallel wrong attempts', async () => {
    const { email } = await signUp(server.base)
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => attempt(email, `wrong-${i}`, `203.0.113.${i + 10}`)))
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 401)).toHaveLength(10)
    expect(statuses.filter((s) => s === 429)).toHaveLength(40)
  })

  it('starts the count over after a successful sign-in', async () => {
    const { email, password } = await signUp(server.base)
    for (let i = 0; i < 9; i++) await attempt(email, 'wrong-password')
    expect((await attempt(email, password)).status).toBe(200)
    for (let i = 0; i < 9; i++)
      expect(statusAndBody(await attempt(email, 'wrong-password'))).toEqual([401, ERRORS.INVALID_EMAIL_OR_PASSWORD])
    expect((await attempt(email, password)).status).toBe(200)
  })

  it('lets an administrator see and lift a lock', async () => {
    const { email, password } = await signUp(server.base)
    for (let i = 0; i < 11; i++) await attempt(email, 'wrong-password')
    const key = `email:${email}`
    expect((await listAccountLocks(server.gatehouse.ctx)).map((l) => l.key)).toContain(key)
    expect(await clearAccountLock(server.gatehouse.ctx, key, null, null)).toBe(true)
    expect((await attempt(email, password)).status).toBe(200)
    const unlocked = await firstRow(
      server.gatehouse.ctx.db
        .select({ n: count() })
        .from(auditEvent)
        .where(and(eq(auditEvent.type, 'security.account-unlocked'), eq(auditEvent.target, key))),
    )
    expect(unlocked?.n).toBe(1)
  })

  it('can be switched off in the config', async () => {
    const { email, password } = await signUp(server.base)
    server.gatehouse.config.update({ security: { accountLockout: { enabled: false } } })
    try {
      for (let i = 0; i < 12; i++)
        expect(statusAndBody(await attempt(email, 'wrong-password'))).toEqual([401, ERRORS.INVALID_EMAIL_OR_PASSWORD])
      expect((await attempt(email, password)).status).toBe(200)
    } finally {
      server.gatehouse.config.update({ security: { accountLockout: { enabled: true } } })
    }
  })
})

describe('password checks of signed-in users share the account throttle', () => {
  it('locks the account after 10 wrong current passwords on change-password, sign-in included', async () => {
    const { client, email, password } = await signUp(server.base)
    for (let i = 0; i < 10; i++) {
      const res = await client.post('/change-password', { currentPassword: `wrong-${i}-password`, newPassword: 'new-password-123' })
      expect(res.status).toBe(400)
      expect(res.body).toEqual({ code: 'INVALID_PASSWORD', message: 'Invalid password' })
    }
    const locked = await client.post('/change-password', { currentPassword: password, newPassword: 'new-password-123' })
    expect(statusAndBody(locked)).toEqual([429, ERRORS.TOO_MANY_REQUESTS])
    expect(statusAndBody(await attempt(email, password))).toEqual([429, ERRORS.TOO_MANY_REQUESTS])
  })
})

describe('changing the email address needs a fresh session', () => {
  it('refuses change-email on a session older than freshAge, by default', async () => {
    server.gatehouse.config.update({ user: { changeEmail: { enabled: true } } })
    try {
      const { client } = await signUp(server.base)
      server.clock.advanceSeconds(86_400 + 1)
      const stale = await client.post('/change-email', { newEmail: uniqueEmail('new') })
      expect(stale.status).toBe(403)
      expect(stale.body).toEqual({ code: 'SESSION_NOT_FRESH', message: 'Session is not fresh' })

      const { client: fresh } = await signUp(server.base)
      expect((await fresh.post('/change-email', { newEmail: uniqueEmail('new') })).status).toBe(200)

      server.gatehouse.config.update({ user: { changeEmail: { requireFreshSession: false } } })
      expect((await client.post('/change-email', { newEmail: uniqueEmail('new') })).status).toBe(200)
    } finally {
      server.gatehouse.config.update({ user: { changeEmail: { enabled: false, requireFreshSession: true } } })
    }
  })
})

describe('bursts of correct sign-ins', () => {
  it('never lock an account: over-limit checks in flight get a brief 429, then the account works', async () => {
    const { email, password } = await signUp(server.base)
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => attempt(email, password, `192.0.2.${i + 1}`)))
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(10)
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([])
    for (const a of answers.filter((x) => x.status === 429)) expect(a.headers.get('x-retry-after')).toBe('1')
    expect((await attempt(email, password)).status).toBe(200)
  })
})

describe('username sign-in shares the account throttle', () => {
  it('counts failures by username against the account, and unknown usernames alike', async () => {
    const username = `lock_${Date.now().toString(36)}`
    const { email, password } = await signUp(server.base, { username })
    const byUsername = (u: string, p: string) => new HttpClient(server.base).post('/sign-in/username', { username: u, password: p })
    for (let i = 0; i < 10; i++)
      expect(statusAndBody(await byUsername(username, 'wrong-password'))).toEqual([
        401,
        { code: 'INVALID_USERNAME_OR_PASSWORD', message: 'invalid username or password' },
      ])
    const locked = await byUsername(username, password)
    expect(statusAndBody(locked)).toEqual([429, ERRORS.TOO_MANY_REQUESTS])
    expect(locked.headers.get('x-retry-after')).toBe('900')
    expect(statusAndBody(await attempt(email, password))).toEqual([429, ERRORS.TOO_MANY_REQUESTS])

    const ghost = `ghost_${Date.now().toString(36)}`
    for (let i = 0; i < 10; i++)
      expect(statusAndBody(await byUsername(ghost, 'wrong-password'))).toEqual([
        401,
        { code: 'INVALID_USERNAME_OR_PASSWORD', message: 'invalid username or password' },
      ])
    expect(statusAndBody(await byUsername(ghost, 'wrong-password'))).toEqual([429, ERRORS.TOO_MANY_REQUESTS])
  })
})
