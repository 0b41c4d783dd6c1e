import { BASE_ERROR_CODES } from '@better-auth/core/error'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CookieJar, uniqueEmail } from '../helpers/http.js'
import { officialClient as official } from '../helpers/official-client.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

/** The official client as a browser app would use it: credentials in a cookie jar, Origin sent. */
function officialClient(jar = new CookieJar()) {
  return official(server, { jar })
}

describe('the official better-auth client against Gatehouse', () => {
  it('drives sign-up → get-session → list-sessions → revoke → sign-out', async () => {
    const { client, jar } = officialClient()
    const email = uniqueEmail('official')
    const signUp = await client.signUp.email({ name: 'Official', email, password: 'password1234' })
    expect(signUp.error).toBeNull()
    expect(signUp.data?.user.email).toBe(email)
    // The signed cookie: the session token, a dot and the URL-encoded HMAC.
    expect(jar.get('better-auth.session_token')).toMatch(new RegExp(`^${signUp.data?.token}\\.[A-Za-z0-9%]+%3D$`))

    const session = await client.getSession()
    expect(session.error).toBeNull()
    expect(session.data?.user.email).toBe(email)
    // The client revives ISO dates into Date objects.
    expect(session.data?.session.expiresAt).toBeInstanceOf(Date)

    const second = officialClient()
    const signIn = await second.client.signIn.email({ email, password: 'password1234' })
    expect(signIn.error).toBeNull()

    const sessions = await client.listSessions()
    expect(sessions.data).toHaveLength(2)

    const other = sessions.data?.find((s) => s.token !== session.data?.session.token)
    const revoke = await client.revokeSession({ token: other?.token as string })
    expect(revoke.data).toEqual({ status: true })
    expect((await second.client.getSession()).data).toBeNull()

    const out = await client.signOut()
    expect(out.data).toEqual({ success: true })
    expect(jar.get('better-auth.session_token')).toBeUndefined()
    expect((await client.getSession()).data).toBeNull()
  })

  it('surfaces our error codes through its typed errors', async () => {
    const { client } = officialClient()
    const email = uniqueEmail('dup')
    // The current client's catalogue: apps compare error.code with these.
    expect(BASE_ERROR_CODES.USER_ALREADY_EXISTS.code).toBe('USER_ALREADY_EXISTS')
    await client.signUp.email({ name: 'A', email, password: 'password1234' })
    const again = await officialClient().client.signUp.email({ name: 'B', email, password: 'password1234' })
    expect(again.error?.status).toBe(422)
    expect(again.error?.code).toBe('USER_ALREADY_EXISTS')
    expect(again.error?.message).toBe('User already exists')

    const short = await officialClient().client.signUp.email({ name: 'C', email: uniqueEmail(), password: 'short' })
    expect(short.error?.status).toBe(400)
    expect(short.error?.code).toBe(BASE_ERROR_CODES.PASSWORD_TOO_SHORT.code)
    expect(short.error?.message).toBe(BASE_ERROR_CODES.PASSWORD_TOO_SHORT.message)

    const wrong = await officialClient().client.signIn.email({ email, password: 'not the password' })
    expect(wrong.error?.status).toBe(401)
    expect(wrong.error?.code).toBe(BASE_ERROR_CODES.INVALID_EMAIL_OR_PASSWORD.code)
    expect(wrong.error?.message).toBe(BASE_ERROR_CODES.INVALID_EMAIL_OR_PASSWORD.message)
  })

  it('keeps a rememberMe=false session in a browser-session cookie', async () => {
    const { client: first } = officialClient()
    const email = uniqueEmail('remember')
    await first.signUp.email({ name: 'R', email, password: 'password1234' })
    const { client, jar } = officialClient()
    const res = await client.signIn.email({ email, password: 'password1234', rememberMe: false })
    expect(res.error).toBeNull()
    expect(jar.get('better-auth.dont_remember')).toMatch(/^true\./)
    const session = await client.getSession()
    const lifetime = (session.data?.session.expiresAt.getTime() ?? 0) - server.clock.now()
    expect(lifetime).toBe(86_400_000)
  })
})
