import { AsyncLocalStorage } from 'node:async_hooks'
import { setImmediate as tick } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { idleOff } from '../../server/idle-scope.js'

/**
 * What disable() does to work a run left behind: on Node 22 (async_hooks) it reads no store any
 * more; with AsyncContextFrame (Node 24) disable() leaves other contexts alone and it keeps its own.
 */
async function disableReachesLeftBehindWork(): Promise<boolean> {
  const probe = new AsyncLocalStorage<string>()
  let release = () => {}
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  let leftBehind: Promise<string | undefined> = Promise.resolve(undefined)
  await probe.run('probe', async () => {
    leftBehind = (async () => {
      await gate
      return probe.getStore()
    })()
  })
  probe.disable()
  release()
  return (await leftBehind) === undefined
}

describe('idleOff: an AsyncLocalStorage off while no run is in flight', () => {
  it('overlapping runs keep their own store until the last one ends', async () => {
    const storage = idleOff(new AsyncLocalStorage<string>())
    let releaseFirst = () => {}
    const firstGate = new Promise<void>((resolve) => {
      releaseFirst = resolve
    })
    const first = storage.run('first', async () => {
      await firstGate
      return storage.getStore()
    })
    const second = storage.run('second', async () => {
      await tick()
      return storage.getStore()
    })
    // The second ends first: the first, still in flight, keeps reading its store.
    expect(await second).toBe('second')
    await tick()
    releaseFirst()
    expect(await first).toBe('first')
  })

  it('once every run has ended, work a run left behind reads no store; a new run has its own', async () => {
    const storage = idleOff(new AsyncLocalStorage<string>())
    let leftBehind: Promise<string | undefined> = Promise.resolve(undefined)
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    await storage.run('request', async () => {
      leftBehind = (async () => {
        await gate
        return storage.getStore()
      })()
      expect(storage.getStore()).toBe('request')
    })
    await tick()
    release()
    expect(await leftBehind).toBe((await disableReachesLeftBehindWork()) ? undefined : 'request')
    expect(await storage.run('next', async () => storage.getStore())).toBe('next')
  })

  it("wraps an instance once, however often it is handed over (oidc-provider's, at every provider build)", async () => {
    const storage = idleOff(new AsyncLocalStorage<string>())
    const counted = storage.run
    expect(idleOff(storage)).toBe(storage)
    expect(storage.run).toBe(counted)
    expect(await storage.run('again', async () => storage.getStore())).toBe('again')
  })

  it('counts synchronous and throwing runs too', async () => {
    const storage = idleOff(new AsyncLocalStorage<number>())
    expect(storage.run(1, () => storage.getStore())).toBe(1)
    expect(() =>
      storage.run(2, () => {
        throw new Error('refused')
      }),
    ).toThrow('refused')
    await expect(storage.run(3, async () => Promise.reject(new Error('late')))).rejects.toThrow('late')
    // None in flight: a fourth run still works, and runs inside runs see the innermost store.
    const inner = await storage.run(4, async () => {
      await tick()
      return storage.run(5, async () => storage.getStore())
    })
    expect(inner).toBe(5)
    expect(storage.getStore()).toBeUndefined()
  })
})
