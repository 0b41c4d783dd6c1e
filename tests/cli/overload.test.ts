import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { HttpClient, signUp } from '../helpers/http.js'
import { startServerProcess } from '../helpers/process.js'

const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-overload-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('overload', () => {
  // Outcome and order only: how fast and how much memory belong to bench/ (no timing here).
  it('answers 500 concurrent sign-ins with 200, 503 SERVER_BUSY or a brief 429, and keeps serving sessions while they are hashed', async () => {
    const server = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'])
    try {
      // Many accounts, so the per-account throttle is not what limits the burst.
      const users = await Promise.all(Array.from({ length: 12 }, () => signUp(server.url)))
      const reader = users[0]?.client as HttpClient

      let answered = 0
      const burst = Promise.all(
        Array.from({ length: 500 }, (_, i) => {
          const u = users[i % users.length] as (typeof users)[number]
          return new HttpClient(server.url).post('/sign-in/email', { email: u.email, password: u.password }).finally(() => {
            answered++
          })
        }),
      )
      // While the burst is being hashed, sessions are still read: reads complete before the
      // last sign-in is answered.
      const readsDuringBurst: number[] = []
      while (answered < 500) {
        const res = await reader.get<{ user: { email: string } }>('/get-session')
        expect([res.status, res.body.user.email]).toEqual([200, users[0]?.email])
        if (answered < 500) readsDuringBurst.push(res.status)
      }
      const answers = await burst

      const byStatus = new Map<number, number>()
      for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1)
      // 429: an account whose checks in flight already reach the lockout threshold waits a moment.
      expect([...byStatus.keys()].filter((s) => s !== 200 && s !== 503 && s !== 429)).toEqual([])
      expect(byStatus.get(503)).toBeGreaterThan(0)
      expect(byStatus.get(200)).toBeGreaterThan(0)
      for (const busy of answers.filter((a) => a.status === 503)) {
        expect(busy.body).toEqual({ code: 'SERVER_BUSY', message: 'Server is busy. Please try again later.' })
        expect(busy.headers.get('retry-after')).toBe('1')
      }
      for (const wait of answers.filter((a) => a.status === 429)) {
        expect(wait.body).toEqual({ code: 'TOO_MANY_REQUESTS', message: 'Too many requests. Please try again later.' })
        expect(wait.headers.get('retry-after')).toBe('1')
      }
      expect(readsDuringBurst.length).toBeGreaterThan(0)
      // Every refused user can sign in once the burst is over.
      const again = await new HttpClient(server.url).post('/sign-in/email', { email: users[1]?.email, password: users[1]?.password })
      expect(again.status).toBe(200)
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  }, 120_000)
})
