import { writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Database from 'better-sqlite3'
import { betterAuth } from 'better-auth'
import { getMigrations } from 'better-auth/db/migration'
import { toNodeHandler } from 'better-auth/node'
import { admin, emailOTP, magicLink, organization, twoFactor, username } from 'better-auth/plugins'
import { and, desc, eq, like } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setRole, systemActor } from '../../server/features/admin/index.js'
import { user, verification } from '../../server/db/schema.js'
import { firstRow } from '../../server/db/storage.js'
import { type Answer, HttpClient, uniqueEmail } from '../helpers/http.js'
import { startTestServer, type TestServer } from '../helpers/server.js'
import { startSmtpSink } from '../helpers/smtp.js'
import { linkIn } from '../helpers/mail-flow.js'

/**
 * Issue 11: a real better-auth 1.7 server configured like Gatehouse (email and password,
 * organization with teams, admin, username; rate limiting off) runs next to Gatehouse. The same
 * request sequence goes to both; each answer is compared on status, `code`, `message`, the shape
 * of the body (keys, recursively, and value types: ids and dates are normalised away) and the
 * Set-Cookie attributes. The few deliberate differences are listed in KNOWN below and in README's
 * compatibility section, each with its reason.
 */

const SECRET = 'differential-secret-0123456789-abcdefghij'

interface Target {
  name: 'gatehouse' | 'better-auth'
  base: string
  /** Makes a user an administrator directly in the database (the operator's way on each side). */
  promote(userId: string): unknown
  /** Marks a user's address verified directly in the database. */
  verify(userId: string): unknown
  /** The link of the last verification mail sent to `address`. */
  verificationLink(address: string): Promise<string>
  /** The token of the last magic link mailed to an address. */
  magicToken(email: string): Promise<string>
  /** The last one-time code mailed to an address for a type. */
  otp(email: string, type: string): Promise<string>
  close(): Promise<void>
}

async function startBetterAuth(): Promise<Target> {
  const sqlite = new Database(':memory:')
  let handler: ((req: never, res: never) => void) | null = null
  // What the plugins would mail: the mail itself is Gatehouse's (tests/api/magic-link, email-otp).
  const links = new Map<string, string>()
  const codes = new Map<string, string>()
  const server: Server = createServer((req, res) => (handler ? handler(req as never, res as never) : res.end()))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const mailed = new Map<string, string>()
  const options = {
    database: sqlite,
    baseURL: origin,
    secret: SECRET,
    emailAndPassword: { enabled: true, sendResetPassword: async () => {} },
    emailVerification: {
      sendVerificationEmail: async ({ user, url }: { user: { email: string }; url: string }) => {
        mailed.set(user.email, url)
      },
    },
    user: { changeEmail: { enabled: true } },
    rateLimit: { enabled: false },
    telemetry: { enabled: false },
    logger: { disabled: true },
    // better-auth skips every origin check when it detects a test runner; production checks them.
    advanced: { disableOriginCheck: false },
    // twoFactor: Gatehouse always ships the two-factor feature, so its users carry twoFactorEnabled
    // (false here), as better-auth's do once the plugin is installed.
    plugins: [
      organization({ teams: { enabled: true } }),
      admin(),
      username(),
      twoFactor(),
      magicLink({ sendMagicLink: async ({ email, token }) => void links.set(email, token) }),
      emailOTP({
        sendVerificationOTP: async ({ email, otp, type }) => void codes.set(`${type}:${email}`, otp),
        changeEmail: { enabled: true },
      }),
    ],
  }
  const { runMigrations } = await getMigrations(options)
  await runMigrations()
  handler = toNodeHandler(betterAuth(options)) as never
  return {
    name: 'better-auth',
    base: `${origin}/api/auth`,
    promote: (userId) => sqlite.prepare("update user set role = 'admin' where id = ?").run(userId),
    verify: (userId) => sqlite.prepare('update user set emailVerified = 1 where id = ?').run(userId),
    verificationLink: async (address) => {
      const url = mailed.get(address)
      if (!url) throw new Error(`better-auth mailed no verification link to ${address}`)
      return url
    },
    magicToken: async (email) => links.get(email) as string,
    otp: async (email, type) => codes.get(`${type}:${email}`) as string,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function startGatehouse(): Promise<Target & { server: TestServer }> {
  const sink = await startSmtpSink()
  const server = await startTestServer({
    secret: SECRET,
    config: {
      mail: { smtp: { url: sink.url } },
      user: { changeEmail: { enabled: true } },
      magicLink: { enabled: true },
      emailOTP: { enabled: true, changeEmail: { enabled: true } },
    },
  })
  const newest = (pattern: string) =>
    firstRow(
      server.gatehouse.ctx.db
        .select()
        .from(verification)
        .where(and(like(verification.identifier, pattern)))
        .orderBy(desc(verification.createdAt))
        .limit(1),
    )
  return {
    name: 'gatehouse',
    base: server.base,
    server,
    promote: (userId) => setRole(server.gatehouse.ctx, systemActor('cli'), { userId, role: 'admin' }, null),
    verify: async (userId) => {
      await server.gatehouse.ctx.db.update(user).set({ emailVerified: true }).where(eq(user.id, userId))
    },
    verificationLink: async (address) => {
      const mail = await sink.waitFor(address, (m) => /^Verify your email address/.test(m.subject))
      return linkIn(mail, `${server.base}/verify-email`)
    },
    // Read where the outbox's mail came from: the verification rows (the mail is tested elsewhere).
    magicToken: async (email) => {
      const rows = await server.gatehouse.ctx.db.select().from(verification).where(like(verification.identifier, 'magic-link:%'))
      const row = rows.filter((r) => r.value.includes(`"email":"${email}"`)).sort((a, b) => +b.createdAt - +a.createdAt)[0]
      return (row?.identifier ?? '').slice('magic-link:'.length)
    },
    // A change-email code is kept under the user's id and the new address: `change-email-otp-{id}:{new}`.
    otp: async (email, type) =>
      ((await newest(type === 'change-email' ? `${type}-otp-%:${email}` : `${type}-otp-${email}`))?.value ?? '').split(':')[0] as string,
    close: async () => {
      await server.close()
      await sink.close()
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Normalisation

/**
 * The shape of a JSON value: keys (sorted, recursively) and value types; values themselves dropped.
 * An array's shape is the distinct shapes of all its elements, sorted: lists ordered by creation
 * time may order rows of the same millisecond differently (SQLite breaks ties by rowid, PostgreSQL
 * by id, and the test clock stands still), and every element's shape is compared, not the first's.
 */
function shape(value: unknown): unknown {
  if (value === null) return 'null'
  if (Array.isArray(value)) return value.length === 0 ? '[]' : distinctShapes(value.map(shape))
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value as object).sort()) out[key] = shape((value as Record<string, unknown>)[key])
    return out
  }
  return typeof value
}

function distinctShapes(shapes: unknown[]): unknown[] {
  return [...new Set(shapes.map((s) => JSON.stringify(s)))].sort().map((s) => JSON.parse(s) as unknown)
}

/** Re-applies `distinctShapes` after an adjustment made two element shapes equal. */
function redistinct(s: unknown): unknown {
  if (Array.isArray(s)) return distinctShapes(s.map(redistinct))
  if (s && typeof s === 'object') return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, redistinct(v)]))
  return s
}

/** Set-Cookie lines as name → attributes (value dropped, except whether it is empty). */
function cookieAttributes(lines: string[]): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {}
  for (const line of lines) {
    const [pair = '', ...attrs] = line.split(';').map((s) => s.trim())
    const eq = pair.indexOf('=')
    const name = pair.slice(0, eq)
    const parsed: Record<string, string> = { value: pair.slice(eq + 1) === '' ? 'empty' : 'set' }
    for (const attr of attrs) {
      const [k = '', v = 'true'] = attr.split('=')
      const key = k.toLowerCase()
      if (key === 'expires') continue // a date; Max-Age carries the lifetime
      parsed[key] = key === 'samesite' ? v.toLowerCase() : v
    }
    out[name] = parsed
  }
  return out
}

interface Seen {
  status: number
  code?: unknown
  message?: unknown
  shape: unknown
  cookies: Record<string, Record<string, string>>
}

function summarise(a: Answer): Seen {
  const body = a.body as Record<string, unknown> | null
  const isError = a.status >= 400 && body !== null && typeof body === 'object'
  return {
    status: a.status,
    ...(isError ? { code: body.code, message: body.message } : {}),
    shape: isError ? undefined : shape(a.body),
    cookies: cookieAttributes(a.cookies),
  }
}

/**
 * Deliberate differences (README "Compatibility with better-auth"): the step name, what differs
 * and how the comparison is adjusted.
 */
const KNOWN: Record<string, (g: Seen, b: Seen) => void> = {
  // Every Gatehouse error carries a code; better-auth sends {message} alone here.
  'update-user with nothing to update': (g, b) => {
    expect(b.code).toBeUndefined()
    g.code = undefined
  },
}

/** Members keep the 1.2-era `teamId` (their first team) for the control panel and older apps. */
const EVERY_STEP = (g: Seen) => stripMemberTeamId(g.shape)

function stripMemberTeamId(s: unknown): void {
  const visit = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(visit)
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>
      if ('organizationId' in o && 'role' in o && 'userId' in o) delete o.teamId
      for (const child of Object.values(o)) visit(child)
    }
  }
  visit(s)
}

// ---------------------------------------------------------------------------------------------
// The scenario, run against each target

interface Actor {
  client: HttpClient
  email: string
  id?: string
  token?: string
}

interface Run {
  target: Target
  seen: Map<string, Seen>
  raw: Map<string, Answer>
}

async function scenario(target: Target): Promise<Run> {
  const seen = new Map<string, Seen>()
  const raw = new Map<string, Answer>()
  const record = (name: string, answer: Answer) => {
    seen.set(name, summarise(answer))
    raw.set(name, answer)
    return answer
  }
  const tag = Math.random().toString(36).slice(2, 8)
  const alice: Actor = { client: new HttpClient(target.base), email: `alice.${tag}@example.com` }
  const bob: Actor = { client: new HttpClient(target.base), email: `bob.${tag}@example.com` }
  const anon = new HttpClient(target.base)
  const body = <T>(name: string) => raw.get(name)?.body as T

  // Core.
  for (const [who, name] of [
    [alice, 'Alice'],
    [bob, 'Bob'],
  ] as const) {
    const res = record(
      `sign-up ${name}`,
      await who.client.post('/sign-up/email', {
        name,
        email: who.email,
        password: 'correct horse battery',
        username: `${name.toLowerCase()}${tag}`,
      }),
    )
    who.id = (res.body as { user: { id: string } }).user.id
    who.token = (res.body as { token: string }).token
  }
  record('get-session', await alice.client.get('/get-session'))
  record('POST get-session', await alice.client.post('/get-session'))
  record(
    'invalid JSON',
    await anon.request('POST', '/sign-in/email', { raw: '{"email":', headers: { 'content-type': 'application/json' } }),
  )
  record(
    'fetch metadata without origin on sign-in',
    await new HttpClient(target.base, { origin: null }).post(
      '/sign-in/email',
      { email: alice.email, password: 'x' },
      { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' },
    ),
  )
  record(
    'fetch metadata without origin on sign-up',
    await new HttpClient(target.base, { origin: null }).post(
      '/sign-up/email',
      { name: 'X', email: uniqueEmail('meta'), password: 'correct horse battery' },
      { 'sec-fetch-site': 'same-origin' },
    ),
  )
  const signedIn = record('sign-in', await alice.client.post('/sign-in/email', { email: alice.email, password: 'correct horse battery' }))
  // The session this client now runs on.
  alice.token = (signedIn.body as { token: string }).token
  record('update-user with nothing to update', await alice.client.post('/update-user', {}))
  record('update-user name', await alice.client.post('/update-user', { name: 'Alice A.' }))
  record('send-verification-email unknown address', await anon.post('/send-verification-email', { email: uniqueEmail('ghost') }))
  record('send-verification-email other address with session', await alice.client.post('/send-verification-email', { email: bob.email }))
  record('send-verification-email own address', await alice.client.post('/send-verification-email', { email: alice.email }))
  record('list-sessions', await alice.client.get('/list-sessions'))
  await target.verify(bob.id as string)
  record('send-verification-email verified address with session', await bob.client.post('/send-verification-email', { email: bob.email }))
  record('send-verification-email verified address without session', await anon.post('/send-verification-email', { email: bob.email }))

  // Change of an unverified address (issue 31 §5): nothing changes until the link mailed to the
  // new address is followed; a taken address gets the same answer.
  const aliceNew = `alice.new.${tag}@example.com`
  record('change-email of an unverified address', await alice.client.post('/change-email', { newEmail: aliceNew }))
  record('get-session after change-email', await alice.client.get('/get-session'))
  record('change-email to a taken address', await alice.client.post('/change-email', { newEmail: bob.email }))
  const changeLink = (await target.verificationLink(aliceNew)).replace(/&callbackURL=.*$/, '')
  record('verify-email of the change, signed out', await anon.get(changeLink.slice(target.base.length)))
  record('get-session after the change', await alice.client.get('/get-session'))
  alice.email = aliceNew

  // Organizations and teams.
  record('create organization', await alice.client.post('/organization/create', { name: 'Org A', slug: `org-a-${tag}` }))
  const orgA = body<{ id: string }>('create organization').id
  record('get-session after create', await alice.client.get('/get-session'))
  record('list-user-teams', await alice.client.get('/organization/list-user-teams'))
  const defaultTeam = body<Array<{ id: string }>>('list-user-teams')[0]?.id as string
  record('list-team-members of the active team', await alice.client.get('/organization/list-team-members'))
  record('create-team', await alice.client.post('/organization/create-team', { name: 'Second' }))
  const second = body<{ id: string }>('create-team').id
  record('set-active-team of a team the caller is not in', await alice.client.post('/organization/set-active-team', { teamId: second }))
  record('set-active-team unknown', await alice.client.post('/organization/set-active-team', { teamId: 'nope' }))
  record('invite bob', await alice.client.post('/organization/invite-member', { email: bob.email, role: 'member' }))
  const invitationId = body<{ id: string }>('invite bob').id
  record('accept invitation', await bob.client.post('/organization/accept-invitation', { invitationId }))
  record('add-team-member bob', await alice.client.post('/organization/add-team-member', { teamId: second, userId: bob.id }))
  record('add-team-member alice', await alice.client.post('/organization/add-team-member', { teamId: second, userId: alice.id }))
  record('add-team-member non-member', await alice.client.post('/organization/add-team-member', { teamId: second, userId: 'nobody' }))
  record(
    'add-team-member by a plain member',
    await bob.client.post('/organization/add-team-member', { teamId: defaultTeam, userId: bob.id, organizationId: orgA }),
  )
  record('set-active-team', await alice.client.post('/organization/set-active-team', { teamId: second }))
  record('get-session with active team', await alice.client.get('/get-session'))
  record('list-team-members', await alice.client.get(`/organization/list-team-members?teamId=${second}`))
  record('list-user-teams scoped', await alice.client.get(`/organization/list-user-teams?organizationId=${orgA}`))
  record('remove-team-member bob', await alice.client.post('/organization/remove-team-member', { teamId: second, userId: bob.id }))
  record('remove-team-member bob again', await alice.client.post('/organization/remove-team-member', { teamId: second, userId: bob.id }))
  record('set-active-team null', await alice.client.post('/organization/set-active-team', { teamId: null }))
  record('set-active-team null again', await alice.client.post('/organization/set-active-team', { teamId: null }))
  // Bob's own organization: its team is out of reach from organization A.
  record('create organization B', await bob.client.post('/organization/create', { name: 'Org B', slug: `org-b-${tag}` }))
  record('list-user-teams bob', await bob.client.get('/organization/list-user-teams'))
  const bobTeam = body<Array<{ organizationId: string; id: string }>>('list-user-teams bob').find((t) => t.organizationId !== orgA)
    ?.id as string
  record(
    'add-team-member to a team of another organization',
    await alice.client.post('/organization/add-team-member', { teamId: bobTeam, userId: alice.id }),
  )
  record('list-team-members of another organization', await alice.client.get(`/organization/list-team-members?teamId=${bobTeam}`))
  // Removing the caller's active team: refused (403) before the last-team rule (400) is looked at.
  record('set-active-team bob', await bob.client.post('/organization/set-active-team', { teamId: bobTeam }))
  record('remove-team the active and last team', await bob.client.post('/organization/remove-team', { teamId: bobTeam }))
  record('create-team in B', await bob.client.post('/organization/create-team', { name: 'Spare' }))
  const spare = body<{ id: string }>('create-team in B').id
  record('remove-team the active team, another left', await bob.client.post('/organization/remove-team', { teamId: bobTeam }))
  record('set-active-team null bob', await bob.client.post('/organization/set-active-team', { teamId: null }))
  record('remove-team spare', await bob.client.post('/organization/remove-team', { teamId: spare }))
  record('remove-team the last team', await bob.client.post('/organization/remove-team', { teamId: bobTeam }))
  record(
    'remove member bob from A',
    await alice.client.post('/organization/remove-member', { memberIdOrEmail: bob.email, organizationId: orgA }),
  )
  record('list-user-teams bob after removal', await bob.client.get('/organization/list-user-teams'))

  // Admin.
  await target.promote(alice.id as string)
  record('list-users without limit', await alice.client.get('/admin/list-users'))
  record('list-users with limit and offset', await alice.client.get('/admin/list-users?limit=1&offset=1'))

  // Revocation clears the caller's cookies.
  record('revoke-session own', await alice.client.post('/revoke-session', { token: alice.token }))
  record('revoke-sessions', await bob.client.post('/revoke-sessions'))
  record('get-session after revoke-sessions', await bob.client.get('/get-session'))

  // After the admin steps: the users these add would change list-users' pages (ties in creation time order by engine).
  // Magic link (issue 27).
  const carol = `carol.${tag}@example.com`
  record('magic-link send', await anon.post('/sign-in/magic-link', { email: carol, callbackURL: '/dash' }))
  record(
    'magic-link send untrusted callback',
    await anon.post('/sign-in/magic-link', { email: carol, callbackURL: 'https://evil.example/' }),
  )
  const link = await target.magicToken(carol)
  record('magic-link verify untrusted callbackURL', await anon.get(`/magic-link/verify?token=${link}&callbackURL=https://evil.example/`))
  record('magic-link verify', await new HttpClient(target.base).get(`/magic-link/verify?token=${link}`))
  record('magic-link verify reused', await new HttpClient(target.base).get(`/magic-link/verify?token=${link}&callbackURL=/dash`))
  record('magic-link verify unknown token', await new HttpClient(target.base).get('/magic-link/verify?token=nope'))
  await anon.post('/sign-in/magic-link', { email: carol, callbackURL: '/dash' })
  record(
    'magic-link verify with callbackURL',
    await new HttpClient(target.base).get(`/magic-link/verify?token=${await target.magicToken(carol)}&callbackURL=/dash`),
  )

  // Email one-time codes (issue 27).
  const dave = `dave.${tag}@example.com`
  record('email-otp send sign-in', await anon.post('/email-otp/send-verification-otp', { email: dave, type: 'sign-in' }))
  record('email-otp send invalid email', await anon.post('/email-otp/send-verification-otp', { email: 'nope', type: 'sign-in' }))
  record('email-otp send unknown type', await anon.post('/email-otp/send-verification-otp', { email: dave, type: 'other' }))
  const daveCode = await target.otp(dave, 'sign-in')
  const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0')
  record('email-otp sign-in wrong code', await anon.post('/sign-in/email-otp', { email: dave, otp: wrongCode(daveCode) }))
  record('email-otp check', await anon.post('/email-otp/check-verification-otp', { email: dave, type: 'sign-in', otp: daveCode }))
  record('email-otp sign-in', await new HttpClient(target.base).post('/sign-in/email-otp', { email: dave, otp: daveCode, name: 'Dave' }))
  record('email-otp sign-in reused', await new HttpClient(target.base).post('/sign-in/email-otp', { email: dave, otp: daveCode }))
  for (let i = 1; i <= 3; i++) {
    await anon.post('/email-otp/send-verification-otp', { email: dave, type: 'sign-in' })
  }
  const fresh = await target.otp(dave, 'sign-in')
  for (let i = 1; i <= 3; i++)
    record(`email-otp wrong guess ${i}`, await anon.post('/sign-in/email-otp', { email: dave, otp: wrongCode(fresh) }))
  record('email-otp right code after 3 wrong', await anon.post('/sign-in/email-otp', { email: dave, otp: fresh }))
  record(
    'email-otp send email-verification',
    await anon.post('/email-otp/send-verification-otp', { email: alice.email, type: 'email-verification' }),
  )
  record(
    'email-otp verify-email',
    await anon.post('/email-otp/verify-email', { email: alice.email, otp: await target.otp(alice.email, 'email-verification') }),
  )
  record(
    'email-otp send forget-password',
    await anon.post('/email-otp/send-verification-otp', { email: bob.email, type: 'forget-password' }),
  )
  const resetCode = await target.otp(bob.email, 'forget-password')
  record(
    'email-otp reset-password short',
    await anon.post('/email-otp/reset-password', { email: bob.email, otp: resetCode, password: 'x' }),
  )
  record(
    'email-otp reset-password',
    await anon.post('/email-otp/reset-password', { email: bob.email, otp: resetCode, password: 'correct horse battery' }),
  )
  record(
    'email-otp reset-password reused',
    await anon.post('/email-otp/reset-password', { email: bob.email, otp: resetCode, password: 'correct horse battery' }),
  )

  // Email change by code (emailOTP changeEmail.enabled).
  const erin = new HttpClient(target.base)
  const erinEmail = `erin.${tag}@example.com`
  const erinNew = `erin.new.${tag}@example.com`
  record(
    'email-otp change-email sign-up',
    await erin.post('/sign-up/email', { email: erinEmail, password: 'correct horse battery', name: 'Erin' }),
  )
  record('email-otp send change-email type', await anon.post('/email-otp/send-verification-otp', { email: erinNew, type: 'change-email' }))
  record('email-otp request-email-change signed out', await anon.post('/email-otp/request-email-change', { newEmail: erinNew }))
  record('email-otp request-email-change same', await erin.post('/email-otp/request-email-change', { newEmail: erinEmail.toUpperCase() }))
  record('email-otp request-email-change invalid', await erin.post('/email-otp/request-email-change', { newEmail: 'nope' }))
  record('email-otp request-email-change taken', await erin.post('/email-otp/request-email-change', { newEmail: bob.email }))
  record('email-otp request-email-change', await erin.post('/email-otp/request-email-change', { newEmail: erinNew }))
  const changeCode = await target.otp(erinNew, 'change-email')
  record('email-otp change-email wrong code', await erin.post('/email-otp/change-email', { newEmail: erinNew, otp: wrongCode(changeCode) }))
  record('email-otp change-email other address', await erin.post('/email-otp/change-email', { newEmail: bob.email, otp: changeCode }))
  record('email-otp change-email', await erin.post('/email-otp/change-email', { newEmail: erinNew, otp: changeCode }))
  record('email-otp get-session after change-email', await erin.get('/get-session'))
  record('email-otp change-email same', await erin.post('/email-otp/change-email', { newEmail: erinNew, otp: changeCode }))
  record('email-otp change-email reused', await erin.post('/email-otp/change-email', { newEmail: erinEmail, otp: changeCode }))

  return { target, seen, raw }
}

let gatehouse: Awaited<ReturnType<typeof startGatehouse>>
let reference: Target
let runs: { g: Run; b: Run }

beforeAll(async () => {
  gatehouse = await startGatehouse()
  reference = await startBetterAuth()
  runs = { g: await scenario(gatehouse), b: await scenario(reference) }
}, 120_000)
afterAll(async () => {
  await reference?.close()
  await gatehouse?.close()
})

describe('Gatehouse answers like better-auth 1.7', () => {
  it('runs the same sequence of steps on both', () => {
    expect([...runs.g.seen.keys()]).toEqual([...runs.b.seen.keys()])
  })

  it('every step: status, code, message, body shape and Set-Cookie attributes', () => {
    const mismatches: string[] = []
    for (const [step, b] of runs.b.seen) {
      const g = structuredClone(runs.g.seen.get(step) as Seen)
      const bb = structuredClone(b)
      EVERY_STEP(g)
      KNOWN[step]?.(g, bb)
      g.shape = redistinct(g.shape)
      bb.shape = redistinct(bb.shape)
      if (JSON.stringify(g) !== JSON.stringify(bb)) {
        mismatches.push(`${step}\n  gatehouse:   ${JSON.stringify(g)}\n  better-auth: ${JSON.stringify(bb)}`)
      }
    }
    if (process.env.DIFF_DUMP) writeFileSync(process.env.DIFF_DUMP, mismatches.join('\n\n'))
    expect(mismatches).toEqual([])
  })

  it('the answers the issue names are the ones both give', () => {
    for (const { seen } of [runs.g, runs.b]) {
      expect(seen.get('POST get-session')).toMatchObject({ status: 405, code: 'METHOD_NOT_ALLOWED_DEFER_SESSION_REQUIRED' })
      expect(seen.get('invalid JSON')).toMatchObject({ status: 400, code: 'BAD_REQUEST', message: 'Invalid JSON in request body' })
      expect(seen.get('fetch metadata without origin on sign-in')).toMatchObject({ status: 403, code: 'MISSING_OR_NULL_ORIGIN' })
      expect(seen.get('fetch metadata without origin on sign-up')).toMatchObject({ status: 403, code: 'MISSING_OR_NULL_ORIGIN' })
      expect(seen.get('send-verification-email unknown address')).toMatchObject({ status: 200, shape: { status: 'boolean' } })
      expect(seen.get('send-verification-email other address with session')).toMatchObject({
        status: 400,
        code: 'EMAIL_MISMATCH',
        message: 'Email mismatch',
      })
      expect(seen.get('send-verification-email verified address with session')).toMatchObject({
        status: 400,
        code: 'EMAIL_ALREADY_VERIFIED',
        message: 'Email is already verified',
      })
      expect(seen.get('send-verification-email verified address without session')).toMatchObject({ status: 200 })
      expect(seen.get('update-user with nothing to update')).toMatchObject({ status: 400, message: 'No fields to update' })
      expect(seen.get('set-active-team of a team the caller is not in')).toMatchObject({
        status: 403,
        code: 'USER_IS_NOT_A_MEMBER_OF_THE_TEAM',
      })
      expect(seen.get('add-team-member to a team of another organization')).toMatchObject({ status: 400, code: 'TEAM_NOT_FOUND' })
      for (const step of ['change-email of an unverified address', 'change-email to a taken address']) {
        expect(seen.get(step), step).toMatchObject({ status: 200, shape: { status: 'boolean' } })
      }
      expect(seen.get('verify-email of the change, signed out')).toMatchObject({ status: 200 })
      for (const step of ['remove-team the active and last team', 'remove-team the active team, another left']) {
        expect(seen.get(step), step).toMatchObject({ status: 403, code: 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM' })
      }
      expect(seen.get('remove-team spare')).toMatchObject({ status: 200 })
      expect(seen.get('remove-team the last team')).toMatchObject({ status: 400, code: 'UNABLE_TO_REMOVE_LAST_TEAM' })
      expect(seen.get('get-session with active team')?.shape).toMatchObject({ session: { activeTeamId: 'string' } })
      expect(seen.get('get-session')?.shape).toMatchObject({ session: { activeTeamId: 'null' } })
      expect(Object.keys(seen.get('list-users without limit')?.shape as object)).toEqual(['total', 'users'])
      expect(Object.keys(seen.get('list-users with limit and offset')?.shape as object)).toEqual(['limit', 'offset', 'total', 'users'])
      for (const step of ['revoke-session own', 'revoke-sessions']) {
        const cookies = seen.get(step)?.cookies ?? {}
        expect(cookies['better-auth.session_token'], step).toMatchObject({ value: 'empty', 'max-age': '0' })
        expect(cookies['better-auth.session_data'], step).toMatchObject({ value: 'empty', 'max-age': '0' })
      }
    }
  })

  it('an unverified address changes only when the link mailed to the new one is followed, on both', () => {
    for (const { raw } of [runs.g, runs.b]) {
      const userOf = (step: string) => (raw.get(step)?.body as { user?: { email: string; emailVerified: boolean } } | undefined)?.user
      expect(userOf('get-session after change-email')?.email).toMatch(/^alice\.[a-z0-9]+@/)
      expect(userOf('verify-email of the change, signed out')).toMatchObject({
        email: expect.stringMatching(/^alice\.new\./),
        emailVerified: false,
      })
      expect(userOf('get-session after the change')?.email).toMatch(/^alice\.new\./)
    }
  })

  it('magic link and email codes (issue 27): redirects go to the same place, the refusals the issue names are the same', () => {
    const path = (run: Run, step: string) => {
      const location = run.raw.get(step)?.headers.get('location')
      return location ? location.replace(new URL(run.target.base).origin, '') : null
    }
    for (const step of ['magic-link verify reused', 'magic-link verify unknown token', 'magic-link verify with callbackURL']) {
      expect(path(runs.g, step), step).toBe(path(runs.b, step))
    }
    expect(path(runs.g, 'magic-link verify reused')).toBe('/dash?error=INVALID_TOKEN')
    expect(path(runs.g, 'magic-link verify with callbackURL')).toBe('/dash')
    for (const { seen } of [runs.g, runs.b]) {
      expect(seen.get('magic-link verify')).toMatchObject({ status: 200, shape: { token: 'string' } })
      expect(seen.get('magic-link verify untrusted callbackURL')).toMatchObject({ status: 403, code: 'INVALID_CALLBACK_URL' })
      expect(seen.get('email-otp sign-in')).toMatchObject({ status: 200 })
      expect(seen.get('email-otp sign-in reused')).toMatchObject({ status: 400, code: 'INVALID_OTP' })
      expect(seen.get('email-otp right code after 3 wrong')).toMatchObject({ status: 403, code: 'TOO_MANY_ATTEMPTS' })
      expect(seen.get('email-otp reset-password')).toMatchObject({ status: 200 })
    }
  })

  it('/error shows error_description, HTML-escaped, on both', async () => {
    for (const base of [gatehouse.base, reference.base]) {
      const res = await fetch(`${base}/error?error=access_denied&error_description=${encodeURIComponent('<b>denied</b> & gone')}`)
      expect(res.status, base).toBe(200)
      expect(res.headers.get('content-type'), base).toMatch(/^text\/html/)
      const html = await res.text()
      expect(html, base).toContain('&lt;b&gt;denied&lt;/b&gt; &amp; gone')
      expect(html, base).not.toContain('<b>denied</b>')
    }
  })
})
