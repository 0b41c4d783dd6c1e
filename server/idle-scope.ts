import type { AsyncLocalStorage } from 'node:async_hooks'

/** The instances idleOff already counts. */
const counted = new WeakSet<AsyncLocalStorage<unknown>>()

/**
 * An AsyncLocalStorage that switches itself off when no run of it is in flight. On Node 22 (no
 * AsyncContextFrame by default) an enabled AsyncLocalStorage keeps async_hooks' promise hooks on
 * for every promise the process creates, for ever once it has been run once; a rotating refresh
 * answered by the fast token path pays them on each of its promises although it runs in none.
 *
 * Every call of `run` on the instance (whoever makes it: Gatehouse or a library holding the
 * instance) is counted; when the last one in flight settles (its callback returned, or the promise
 * it returned settled), the instance is disabled (`getStore()` answers undefined) until the next
 * `run` enables it again, as server/db/storage.ts does for its transaction marker. Only what a run
 * awaits is inside it: work a run starts and leaves behind (not awaited) must not read the store
 * once every run has ended. With AsyncContextFrame (Node 24) disable() only drops the store from
 * the current context, which outside every run (where the count reaches zero) holds none of it.
 */
export function idleOff<S, A extends AsyncLocalStorage<S>>(storage: A): A {
  // Once per instance (oidc-provider's is handed over again at every provider build).
  if (counted.has(storage)) return storage
  counted.add(storage)
  let inFlight = 0
  const settled = () => {
    inFlight -= 1
    if (inFlight === 0 && storage.getStore() === undefined) storage.disable()
  }
  const run = storage.run
  storage.run = function countedRun<R, TArgs extends unknown[]>(this: A, store: S, callback: (...args: TArgs) => R, ...args: TArgs): R {
    inFlight += 1
    let result: R
    try {
      result = run.call(this, store, callback, ...args) as R
    } catch (error) {
      settled()
      throw error
    }
    if (typeof (result as { then?: unknown } | null)?.then === 'function') (result as PromiseLike<unknown>).then(settled, settled)
    else settled()
    return result
  }
  return storage
}
