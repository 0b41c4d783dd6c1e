import { readFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { HttpClient, signUp } from '../helpers/http.js'
import { startServerProcess } from '../helpers/process.js'

const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-overload-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const rssMiB = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
}

describe('overload', () => {
  it('answers 500 concurrent sign-ins with 200 or a fast 503, stays under 400 MB and keeps serving sessions', async () => {
    const server = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'])
    const pid = server.child.pid as number
    try {
      // Many accounts, so the per-account throttle is not what limits the burst.
      const users = await Promise.all(Array.from({ length: 12 }, () => signUp(server.url)))
      const reader = users[0]?.client as HttpClient
      let peak = rssMiB(pid)
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssMiB(pid))
      }, 20)

      const burst = Promise.all(
        Array.from({ length: 500 }, (_, i) => {
          const u = users[i % users.length] as (typeof users)[number]
          return new HttpClient(server.url).post('/sign-in/email', { email: u.email, password: u.password })
        }),
      )
      // While the burst is being hashed, sessions are still read.
      const reads: number[] = []
      const deadline = Date.now() + 3000
      while (Date.now() < deadline) {
        const res = await reader.get<{ user: { email: string } }>('/get-session')
        expect(res.body.user.email).toBe(users[0]?.email)
        reads.push(res.status)
      }
      const answers = await burst
      clearInterval(sampler)

      const byStatus = new Map<number, number>()
      for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1)
      expect([...byStatus.keys()].every((s) => s === 200 || s === 503 || s === 429)).toBe(true)
      expect(byStatus.get(503)).toBeGreaterThan(0)
      expect(byStatus.get(200)).toBeGreaterThan(0)
      const busy = answers.find((a) => a.status === 503)
      expect(busy?.body).toEqual({ code: 'SERVER_BUSY', message: 'Server is busy. Please try again later.' })
      expect(busy?.headers.get('retry-after')).toBe('1')
      expect(reads.length).toBeGreaterThan(10)
      expect(peak).toBeLessThan(400)
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  }, 120_000)
})
