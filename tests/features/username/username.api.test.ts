import { and, desc, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser, systemActor } from '../../../server/features/admin/index.js'
import { auditEvent, user } from '../../../server/db/schema.js'
import { HttpClient, uniqueEmail, statusAndBody } from '../../helpers/http.js'
import { linkIn, type MailServer, startMailServer, withMail } from '../../helpers/mail-flow.js'
import { member, officialClient } from '../../helpers/members.js'
import { firstRow } from '../../../server/db/storage.js'

let m: MailServer
beforeAll(async () => {
  m = await startMailServer()
})
afterAll(() => m.close())

let n = 0
/** A fresh valid username, mixed case, unique per call. */
const uname = (prefix = 'User') => `${prefix}_${Date.now().toString(36)}${(n++).toString(36)}`.slice(0, 30)

const INVALID = { code: 'INVALID_USERNAME_OR_PASSWORD', message: 'invalid username or password' }
const row = async (email: string) => await firstRow(m.server.gatehouse.ctx.db.select().from(user).where(eq(user.email, email)))

describe('username on sign-up', () => {
  it('stores the username lower-cased and keeps the typed form as displayUsername', async () => {
    const username = uname('Ada.Love')
    const signedUp = await member(m.server, { username })
    expect(await row(signedUp.email)).toMatchObject({ username: username.toLowerCase(), displayUsername: username })
    const session = await signedUp.client.getSession()
    expect(session.data?.user).toMatchObject({ username: username.toLowerCase(), displayUsername: username })
  })

  it('uses a valid displayUsername alone as the username', async () => {
    const display = uname('Shown')
    const client = new HttpClient(m.server.base)
    const email = uniqueEmail('disp')
    const res = await client.post('/sign-up/email', { name: 'D', email, password: 'password1234', displayUsername: display })
    expect(res.status).toBe(200)
    expect(await row(email)).toMatchObject({ username: display.toLowerCase(), displayUsername: display })
  })

  it('refuses a taken (case-insensitively), too short, too long or invalid username with 422', async () => {
    const username = uname('Taken')
    await member(m.server, { username })
    const client = new HttpClient(m.server.base)
    const attempt = (value: unknown) =>
      client.post('/sign-up/email', { name: 'X', email: uniqueEmail('dupname'), password: 'password1234', username: value })
    const cases: Array<[unknown, number, { code: string; message: string }]> = [
      [username.toUpperCase(), 422, { code: 'USERNAME_IS_ALREADY_TAKEN', message: 'username is already taken. please try another.' }],
      ['ab', 422, { code: 'USERNAME_TOO_SHORT', message: 'username is too short' }],
      ['a'.repeat(31), 422, { code: 'USERNAME_TOO_LONG', message: 'username is too long' }],
      ['no spaces', 422, { code: 'INVALID_USERNAME', message: 'username is invalid' }],
      ['émile', 422, { code: 'INVALID_USERNAME', message: 'username is invalid' }],
    ]
    for (const [value, status, body] of cases) {
      const res = await attempt(value)
      expect(res.status, String(value)).toBe(status)
      expect(res.body, String(value)).toEqual(body)
    }
    expect(statusAndBody(await attempt(42))).toEqual([
      400,
      { code: 'VALIDATION_ERROR', message: '[body.username] Invalid input: expected string' },
    ])
  })

  it('follows the configured length limits live', async () => {
    await m.server.gatehouse.config.update({ username: { minUsernameLength: 5, maxUsernameLength: 8 } })
    try {
      const client = new HttpClient(m.server.base)
      const short = await client.post('/is-username-available', { username: 'abcd' })
      expect(short.body).toEqual({ code: 'USERNAME_TOO_SHORT', message: 'username is too short' })
      const long = await client.post('/is-username-available', { username: 'abcdefghi' })
      expect(long.body).toEqual({ code: 'USERNAME_TOO_LONG', message: 'username is too long' })
      expect((await client.post('/is-username-available', { username: 'abcde' })).body).toEqual({ available: true })
    } finally {
      await m.server.gatehouse.config.update({ username: { minUsernameLength: 3, maxUsernameLength: 30 } })
    }
  })
})

describe('POST /is-username-available', () => {
  it('answers available for a free name, not for a taken one in any case, and 422 for a bad one', async () => {
    const username = uname('Avail')
    const { client } = officialClient(m.server)
    const free = await client.isUsernameAvailable({ username })
    expect(free.data).toEqual({ available: true })
    await member(m.server, { username })
    const taken = await client.isUsernameAvailable({ username: username.toUpperCase() })
    expect(taken.data).toEqual({ available: false })
    const bad = await client.isUsernameAvailable({ username: 'bad name!' })
    expect(bad.error).toMatchObject({ status: 422, code: 'INVALID_USERNAME', message: 'username is invalid' })
  })
})

describe('POST /sign-in/username', () => {
  it('signs in case-insensitively with the official client and sets the session cookie', async () => {
    const username = uname('Signer')
    const signedUp = await member(m.server, { username })
    const { client, last } = officialClient(m.server)
    const res = await client.signIn.username({ username: username.toUpperCase(), password: signedUp.password })
    expect(res.error).toBeNull()
    expect(res.data?.token).toMatch(/^[A-Za-z0-9]{32}$/)
    expect(res.data?.user).toMatchObject({
      id: signedUp.id,
      email: signedUp.email,
      emailVerified: false,
      username: username.toLowerCase(),
      name: signedUp.name,
      image: null,
    })
    expect(res.data).toMatchObject({ redirect: false })
    const cookie = last.setCookies.find((c) => c.startsWith('better-auth.session_token='))
    expect(cookie).toMatch(
      new RegExp(`^better-auth\\.session_token=${res.data?.token}\\.[^;]+; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax$`),
    )
    expect((await client.getSession()).data?.user.id).toBe(signedUp.id)
  })

  it('honours rememberMe: false with a browser-session cookie and dont_remember', async () => {
    const username = uname('Forget')
    const signedUp = await member(m.server, { username })
    const { client, last } = officialClient(m.server)
    const res = await client.signIn.username({ username, password: signedUp.password, rememberMe: false })
    expect(res.error).toBeNull()
    const cookie = last.setCookies.find((c) => c.startsWith('better-auth.session_token='))
    expect(cookie).not.toContain('Max-Age')
    expect(last.setCookies.some((c) => c.startsWith('better-auth.dont_remember=true.'))).toBe(true)
    const session = await client.getSession()
    expect(new Date(session.data?.session.expiresAt as Date).getTime()).toBe(m.server.clock.now() + 86_400_000)
  })

  it('answers the same 401 for a wrong password, an unknown username, a user without password and empty fields', async () => {
    const username = uname('Guard')
    const signedUp = await member(m.server, { username })
    const noPassword = await createUser(
      m.server.gatehouse.ctx,
      systemActor('panel'),
      { email: uniqueEmail('nopw'), name: 'No Password', data: { username: uname('NoPw') } },
      null,
    )
    const client = new HttpClient(m.server.base)
    const attempts = [
      { username, password: 'wrong password' },
      { username: uname('Ghost'), password: signedUp.password },
      { username: noPassword.username, password: signedUp.password },
      { username: '', password: signedUp.password },
      { username, password: '' },
    ]
    for (const body of attempts) {
      const res = await client.post('/sign-in/username', body)
      expect(res.status, JSON.stringify(body)).toBe(401)
      expect(res.body).toEqual(INVALID)
      expect(res.cookies).toEqual([])
    }
    const failures = (
      await m.server.gatehouse.ctx.db
        .select()
        .from(auditEvent)
        .where(and(eq(auditEvent.type, 'user.sign-in'), eq(auditEvent.outcome, 'failure')))
        .orderBy(desc(auditEvent.id))
        .limit(5)
    ).reverse()
    expect(failures.map((e) => (e.detail as { reason: string }).reason)).toEqual([
      'INVALID_PASSWORD',
      'UNKNOWN_USER',
      'NO_CREDENTIAL',
      'MISSING_CREDENTIALS',
      'MISSING_CREDENTIALS',
    ])
    expect(failures[0]).toMatchObject({ targetUserId: signedUp.id, detail: { method: 'username', username: username.toLowerCase() } })
  })

  it('checks the username rules (422) and requires both fields (400)', async () => {
    const client = new HttpClient(m.server.base)
    const short = await client.post('/sign-in/username', { username: 'ab', password: 'password1234' })
    expect(short.status).toBe(422)
    expect(short.body).toEqual({ code: 'USERNAME_TOO_SHORT', message: 'username is too short' })
    const invalid = await client.post('/sign-in/username', { username: 'a-b-c', password: 'password1234' })
    expect(invalid.body).toEqual({ code: 'INVALID_USERNAME', message: 'username is invalid' })
    const long = await client.post('/sign-in/username', { username: 'x'.repeat(31), password: 'password1234' })
    expect(long.body).toEqual({ code: 'USERNAME_TOO_LONG', message: 'username is too long' })
    const missing = await client.post('/sign-in/username', { username: 'someone' })
    expect(missing.status).toBe(400)
    expect(missing.body).toEqual({
      code: 'VALIDATION_ERROR',
      message: '[body.password] Invalid input: expected string, received undefined',
    })
  })

  it('refuses an unverified email with 403 and mails a fresh verification link when verification is required', async () => {
    const username = uname('Unverified')
    const signedUp = await member(m.server, { username })
    await m.server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: true } })
    try {
      const client = new HttpClient(m.server.base)
      const { result, mail } = await withMail(m, signedUp.email, /^Verify your email address/, () =>
        client.post('/sign-in/username', { username, password: signedUp.password, callbackURL: '/welcome' }),
      )
      expect(result.status).toBe(403)
      expect(result.body).toEqual({ code: 'EMAIL_NOT_VERIFIED', message: 'email not verified' })
      expect(result.cookies).toEqual([])
      const link = linkIn(mail, `${m.server.base}/verify-email?token=`)
      expect(new URL(link).searchParams.get('callbackURL')).toBe('/welcome')
      const wrong = await client.post('/sign-in/username', { username, password: 'wrong password' })
      expect(statusAndBody(wrong)).toEqual([401, { code: 'INVALID_USERNAME_OR_PASSWORD', message: 'invalid username or password' }])
    } finally {
      await m.server.gatehouse.config.update({ emailAndPassword: { requireEmailVerification: false } })
    }
  })
})

describe('username on update-user', () => {
  it('changes the username under the same rules; your own current one is accepted', async () => {
    const mine = uname('Mine')
    const theirs = uname('Theirs')
    const me = await member(m.server, { username: mine })
    await member(m.server, { username: theirs })
    const client = new HttpClient(m.server.base)
    client.jar.cookies.set('better-auth.session_token', me.jar.get('better-auth.session_token') as string)
    const taken = await client.post('/update-user', { username: theirs.toUpperCase() })
    expect(taken.status).toBe(422)
    expect(taken.body).toEqual({ code: 'USERNAME_IS_ALREADY_TAKEN', message: 'username is already taken. please try another.' })
    const invalid = await client.post('/update-user', { username: 'x!' })
    expect(statusAndBody(invalid)).toEqual([422, { code: 'USERNAME_TOO_SHORT', message: 'username is too short' }])
    expect((await client.post('/update-user', { username: mine })).status).toBe(200)
    const next = uname('Next')
    expect((await client.post('/update-user', { username: next })).body).toEqual({ status: true })
    expect(await row(me.email)).toMatchObject({ username: next.toLowerCase(), displayUsername: next })
    const signIn = await officialClient(m.server).client.signIn.username({ username: next, password: me.password })
    expect(signIn.error).toBeNull()
  })
})
