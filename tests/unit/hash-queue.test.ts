import { expect, it } from 'vitest'
import { availableParallelism } from 'node:os'
import { HashQueue, HashQueueFullError, hashConcurrency, hashSource, passwordHashQueue } from '../../server/crypto/hash-queue.js'

/**
 * The password-hash queue shared fairly between sources (issue 48 §2): one source holds at most a
 * quarter of it (never fewer than the jobs that run at once), and freed threads go to the sources in
 * turn, so another source's job is not behind a flood's backlog. Jobs are held open by hand here
 * (each a promise the test settles), so the order is exact.
 */

function job(log: string[], name: string) {
  let finish = () => {}
  const done = new Promise<void>((resolve) => {
    finish = resolve
  })
  const task = async () => {
    log.push(name)
    await done
    return name
  }
  return { task, finish }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

it('one source holds at most a quarter of the queue; past it, refused at once while others still get in', async () => {
  const queue = new HashQueue(2, 10) // a quarter of 2 + 10: 3
  expect(queue.perSource).toBe(3)
  const log: string[] = []
  const flood = Array.from({ length: 3 }, (_, i) => job(log, `flood${i}`))
  const runs = flood.map((j) => queue.run(j.task, '203.0.113.9'))
  // Asked before a check writes anything (core/throttle.ts): the flood is refused, another source is not.
  expect(queue.refuses('203.0.113.9')).toBe(true)
  expect(queue.refuses('198.51.100.1')).toBe(false)
  await expect(queue.run(job(log, 'flood3').task, '203.0.113.9')).rejects.toBeInstanceOf(HashQueueFullError)
  const other = job(log, 'other')
  const otherRun = queue.run(other.task, '198.51.100.1')
  await tick()
  expect(log).toEqual(['flood0', 'flood1'])
  flood[0]?.finish()
  await tick()
  // The freed thread: the flood's third job had waited longer, but each source takes its turn.
  expect(log).toEqual(['flood0', 'flood1', 'flood2'])
  flood[1]?.finish()
  await tick()
  expect(log).toEqual(['flood0', 'flood1', 'flood2', 'other'])
  flood[2]?.finish()
  other.finish()
  expect(await Promise.all([...runs, otherRun])).toEqual(['flood0', 'flood1', 'flood2', 'other'])
  expect(queue.pending).toBe(0)
})

it('a freed thread goes to the next source in turn, not to the oldest waiting job', async () => {
  const queue = new HashQueue(1, 64) // a quarter: 17
  const log: string[] = []
  const first = job(log, 'a0')
  const runs = [queue.run(first.task, 'a')]
  const rest = [job(log, 'a1'), job(log, 'a2'), job(log, 'a3'), job(log, 'b0'), job(log, 'c0'), job(log, 'b1')]
  for (const j of rest) runs.push(queue.run(j.task, j === rest[3] || j === rest[5] ? 'b' : j === rest[4] ? 'c' : 'a'))
  await tick()
  first.finish()
  for (const j of rest) {
    await tick()
    j.finish()
  }
  await Promise.all(runs)
  expect(log).toEqual(['a0', 'a1', 'b0', 'c0', 'a2', 'b1', 'a3'])
})

it('the source comes from hashSource around the check; jobs without one are not capped per source', async () => {
  const queue = new HashQueue(1, 8) // a quarter of 9: 3
  const log: string[] = []
  const jobs = Array.from({ length: 6 }, (_, i) => job(log, `anon${i}`))
  const runs = jobs.map((j) => queue.run(j.task))
  const flood = Array.from({ length: 3 }, (_, i) => job(log, `x${i}`))
  const floodRuns = flood.map((j) => hashSource.run('192.0.2.1', () => queue.run(j.task)))
  await expect(hashSource.run('192.0.2.1', () => queue.run(job(log, 'x3').task))).rejects.toBeInstanceOf(HashQueueFullError)
  // The global bound still holds: 1 running + 8 waiting.
  await expect(queue.run(job(log, 'anon6').task)).rejects.toBeInstanceOf(HashQueueFullError)
  for (const j of [...jobs, ...flood]) {
    await tick()
    j.finish()
  }
  await Promise.all([...runs, ...floodRuns])
  expect(log).toEqual(['anon0', 'anon1', 'x0', 'anon2', 'x1', 'anon3', 'x2', 'anon4', 'anon5'])
})

it("runs one hash per core at once, at most libuv's four threads: the process's queue too", async () => {
  expect([1, 2, 3, 4, 8, 64].map((cores) => hashConcurrency(cores))).toEqual([1, 2, 3, 4, 4, 4])
  expect(hashConcurrency(0)).toBe(1)
  expect(passwordHashQueue.concurrency).toBe(Math.min(4, availableParallelism()))
  // The queue itself starts no more than that: the next job waits for a free one.
  const queue = new HashQueue(hashConcurrency(2), 10)
  const log: string[] = []
  const jobs = Array.from({ length: 3 }, (_, i) => job(log, `job${i}`))
  const runs = jobs.map((j) => queue.run(j.task))
  await tick()
  expect(log).toEqual(['job0', 'job1'])
  jobs[0]?.finish()
  await tick()
  expect(log).toEqual(['job0', 'job1', 'job2'])
  for (const j of jobs) j.finish()
  await Promise.all(runs)
})
