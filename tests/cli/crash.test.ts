import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { HttpClient, signUp, uniqueEmail } from '../helpers/http.js'
import { startServerProcess } from '../helpers/process.js'

const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-crash-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

interface Acknowledged {
  users: string[]
  sessions: string[]
  organizations: string[]
}

function checkDatabase(ack: Acknowledged): void {
  const db = new Database(join(dataDir, 'gatehouse.db'))
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
    const has = (sql: string, value: string) => (db.prepare(sql).get(value) as { n: number }).n === 1
    for (const email of ack.users) expect(has('select count(*) as n from user where email = ?', email), email).toBe(true)
    for (const token of ack.sessions) expect(has('select count(*) as n from session where token = ?', token), token).toBe(true)
    for (const slug of ack.organizations) expect(has('select count(*) as n from organization where slug = ?', slug), slug).toBe(true)
  } finally {
    db.close()
  }
}

describe('crash safety', () => {
  it('keeps the database intact and every acknowledged write across 20 SIGKILLs under mixed load', async () => {
    const ack: Acknowledged = { users: [], sessions: [], organizations: [] }
    let seq = 0
    for (let round = 0; round < 20; round++) {
      const server = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'])
      // A signed-in member to create organizations with.
      const owner = await signUp(server.url)
      ack.users.push(owner.email)
      let stop = false
      const loops = [
        // Sign-ups: a password hash each, the slowest write.
        (async () => {
          while (!stop) {
            const email = uniqueEmail(`crash${round}`)
            const res = await new HttpClient(server.url).post('/sign-up/email', { name: 'C', email, password: 'password123' }).catch(() => null)
            if (res?.status === 200) ack.users.push(email)
          }
        })(),
        // Sign-ins: a session row each.
        (async () => {
          while (!stop) {
            const res = await new HttpClient(server.url).post<{ token: string }>('/sign-in/email', { email: owner.email, password: owner.password }).catch(() => null)
            if (res?.status === 200) ack.sessions.push(res.body.token)
          }
        })(),
        // Organization changes: no hashing, many small transactions.
        (async () => {
          while (!stop) {
            const slug = `crash-${round}-${seq++}`
            const res = await owner.client.post('/organization/create', { name: slug, slug }).catch(() => null)
            if (res?.status === 200) ack.organizations.push(slug)
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
      stop = true
      await Promise.allSettled(loops)
      expect((await server.exited).signal).toBe('SIGKILL')
      checkDatabase(ack)
    }
    expect(ack.organizations.length).toBeGreaterThanOrEqual(20)
    expect(ack.sessions.length).toBeGreaterThanOrEqual(20)
  }, 240_000)
})
