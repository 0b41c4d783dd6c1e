import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import '../../server/schema.js' // the tables, handed down to db/ as they load (as gatehouse.ts does first)
import { openDatabase } from '../../server/db/index.js'
import { HttpClient, type SignedUp, signUp, uniqueEmail } from '../helpers/http.js'
import { startServerProcess } from '../helpers/process.js'

/**
 * Crash safety of the real process: 20 rounds of mixed writes (sign-ups, sign-ins, organization
 * creations), each ended by a SIGKILL while requests are in flight. After every kill the file must
 * be intact and hold every acknowledged write *whole* (a user with its credential account, an
 * organization with its owner member); a write in flight at the kill is either whole or absent.
 * After the last restart every acknowledged write is read back through the API: each user signs
 * in with its password, each session cookie still resolves, each organization is listed.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-crash-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const PASSWORD = 'password123'

interface Acknowledged {
  /** Sign-ups answered 200. */
  users: string[]
  /** Session cookies of sign-ins answered 200, with the user they belong to. */
  sessions: { cookie: string; userId: string }[]
  /** Organization slugs answered 200, with the id of the member who created them. */
  organizations: { slug: string; ownerId: string }[]
  /** Sign-ups and organizations sent but never answered (in flight at a kill). */
  unansweredUsers: string[]
  unansweredOrganizations: string[]
}

function checkDatabase(ack: Acknowledged): void {
  const db = new Database(join(dataDir, 'gatehouse.db'))
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
    expect(db.pragma('foreign_key_check')).toEqual([])
    const user = db.prepare('select id from user where email = ?')
    const credential = db.prepare("select password from account where userId = ? and providerId = 'credential'")
    const organization = db.prepare('select id from organization where slug = ?')
    const owner = db.prepare("select userId from member where organizationId = ? and role = 'owner'")
    const session = db.prepare('select count(*) as n from session where userId = ?')
    const wholeUser = (email: string) => {
      const row = user.get(email) as { id: string } | undefined
      if (!row) return 'absent'
      const creds = credential.all(row.id) as { password: string }[]
      return creds.length === 1 && /^[0-9a-f]{32}:[0-9a-f]{128}$/.test(creds[0]?.password ?? '')
        ? 'whole'
        : `half (${creds.length} credential accounts)`
    }
    const wholeOrganization = (slug: string) => {
      const row = organization.get(slug) as { id: string } | undefined
      if (!row) return { state: 'absent', owners: [] as string[] }
      const owners = (owner.all(row.id) as { userId: string }[]).map((m) => m.userId)
      return { state: owners.length === 1 ? 'whole' : 'half', owners }
    }
    for (const email of ack.users) expect(wholeUser(email), email).toBe('whole')
    for (const email of ack.unansweredUsers) expect(['whole', 'absent'], `in flight: ${email}`).toContain(wholeUser(email))
    for (const { slug, ownerId } of ack.organizations) expect(wholeOrganization(slug), slug).toEqual({ state: 'whole', owners: [ownerId] })
    for (const slug of ack.unansweredOrganizations)
      expect(['whole', 'absent'], `in flight: ${slug}`).toContain(wholeOrganization(slug).state)
    for (const userId of new Set(ack.sessions.map((s) => s.userId))) {
      expect((session.get(userId) as { n: number }).n, userId).toBeGreaterThanOrEqual(
        ack.sessions.filter((s) => s.userId === userId).length,
      )
    }
  } finally {
    db.close()
  }
}

describe('crash safety', () => {
  it('opens the database in WAL mode with synchronous=FULL (a SIGKILL keeps the page cache; a power cut does not)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-sync-'))
    try {
      const database = openDatabase(join(dir, 'gatehouse.db'))
      try {
        expect(database.sqlite.pragma('journal_mode', { simple: true })).toBe('wal')
        // 2 = FULL: every commit is fsynced before it is acknowledged.
        expect(database.sqlite.pragma('synchronous', { simple: true })).toBe(2)
      } finally {
        database.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('keeps the database intact and every acknowledged write whole across 20 SIGKILLs that land mid-write', async () => {
    const ack: Acknowledged = { users: [], sessions: [], organizations: [], unansweredUsers: [], unansweredOrganizations: [] }
    const owners: SignedUp[] = []
    const inFlightAtKill: number[] = []
    let seq = 0
    for (let round = 0; round < 20; round++) {
      const server = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'])
      // A signed-in member to create organizations with.
      const owner = await signUp(server.url, { password: PASSWORD })
      owners.push(owner)
      ack.users.push(owner.email)
      let stop = false
      let inFlight = 0
      /** Sends one write; `true` when answered 200, `false` when answered otherwise, `null` when never answered. */
      const send = async <T>(request: () => Promise<{ status: number; body: T }>, onOk: (body: T) => void): Promise<boolean | null> => {
        inFlight++
        try {
          const res = await request()
          if (res.status === 200) onOk(res.body)
          return res.status === 200
        } catch {
          return null
        } finally {
          inFlight--
        }
      }
      const loops = [
        // Sign-ups: a password hash each, then the user and its credential account.
        (async () => {
          while (!stop) {
            const email = uniqueEmail(`crash${round}`)
            const answered = await send(
              () => new HttpClient(server.url).post('/sign-up/email', { name: 'C', email, password: PASSWORD }),
              () => ack.users.push(email),
            )
            if (answered === null) ack.unansweredUsers.push(email)
          }
        })(),
        // Sign-ins: a session row each.
        (async () => {
          while (!stop) {
            const client = new HttpClient(server.url)
            await send(
              () => client.post('/sign-in/email', { email: owner.email, password: PASSWORD }),
              () => ack.sessions.push({ cookie: client.jar.header(), userId: owner.user.id }),
            )
          }
        })(),
        // Organizations: the organization and its owner member in one transaction.
        (async () => {
          while (!stop) {
            const slug = `crash-${round}-${seq++}`
            const answered = await send(
              () => owner.client.post('/organization/create', { name: slug, slug }),
              () => ack.organizations.push({ slug, ownerId: owner.user.id }),
            )
            if (answered === null) ack.unansweredOrganizations.push(slug)
          }
        })(),
      ]
      // Kill mid-load: once this round has acknowledged writes of every kind (bounded wait),
      // plus a varying delay so the kill lands at different points of the write path.
      const before = { users: ack.users.length, sessions: ack.sessions.length, organizations: ack.organizations.length }
      const deadline = Date.now() + 15_000
      while (
        Date.now() < deadline &&
        (ack.users.length <= before.users || ack.sessions.length <= before.sessions || ack.organizations.length <= before.organizations)
      ) {
        await new Promise((r) => setTimeout(r, 10))
      }
      await new Promise((r) => setTimeout(r, (round % 5) * 40))
      server.child.kill('SIGKILL')
      // Requests sent and not yet answered when the signal went out.
      inFlightAtKill.push(inFlight)
      stop = true
      await Promise.allSettled(loops)
      expect((await server.exited).signal).toBe('SIGKILL')
      checkDatabase(ack)
    }
    console.log(
      `crash: requests in flight at each kill: ${inFlightAtKill.join(' ')}; unanswered sign-ups ${ack.unansweredUsers.length}, organizations ${ack.unansweredOrganizations.length}`,
    )
    // The kills land while writes are in flight (three writers run without pause).
    expect(inFlightAtKill.filter((n) => n > 0).length).toBeGreaterThanOrEqual(10)
    expect(ack.unansweredUsers.length + ack.unansweredOrganizations.length).toBeGreaterThan(0)
    expect(ack.organizations.length).toBeGreaterThanOrEqual(20)
    expect(ack.sessions.length).toBeGreaterThanOrEqual(20)

    // Read back through the API after the last restart.
    const server = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'])
    try {
      for (const email of ack.users) {
        const res = await new HttpClient(server.url).post<{ user: { email: string } }>('/sign-in/email', { email, password: PASSWORD })
        expect([res.status, res.body.user?.email], email).toEqual([200, email])
      }
      for (const { cookie, userId } of ack.sessions) {
        const res = await new HttpClient(server.url).get<{ user: { id: string } } | null>('/get-session', { cookie })
        expect([res.status, res.body?.user.id], cookie).toEqual([200, userId])
      }
      for (const owner of owners) {
        const listed = await new HttpClient(server.url).get<{ slug: string }[]>('/organization/list', { cookie: owner.client.jar.header() })
        expect(listed.status).toBe(200)
        const expected = ack.organizations.filter((o) => o.ownerId === owner.user.id).map((o) => o.slug)
        const slugs = new Set(listed.body.map((o) => o.slug))
        expect(
          expected.filter((slug) => !slugs.has(slug)),
          owner.email,
        ).toEqual([])
      }
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  }, 300_000)
})
