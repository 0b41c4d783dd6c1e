/**
 * better-auth's secondary storage (`SecondaryStorage` of @better-auth/core: get, set with a TTL in
 * seconds, delete, getAndDelete, increment) on Redis or Valkey through ioredis: `--redis-url
 * redis://…` / GATEHOUSE_REDIS_URL. Shared by every instance: rate-limit counters
 * (rateLimit.storage 'secondary-storage', server/core/secondary-rate-limit.ts) and shared caches.
 * Keys are prefixed (default "gatehouse:") so one Redis can serve several installs.
 */
import { Redis } from 'ioredis'

export interface SecondaryStorage {
  /** The stored string, or null when absent or expired. */
  get(key: string): Promise<string | null>
  /** Stores `value`; with `ttl` (seconds, > 0) it expires then. */
  set(key: string, value: string, ttl?: number): Promise<void>
  delete(key: string): Promise<void>
  /** Atomically reads and removes: of two concurrent callers, one gets the value, the other null. */
  getAndDelete(key: string): Promise<string | null>
  /**
   * Atomically adds one and returns the new value. An absent key starts at 1 with `ttl` seconds
   * to live; later increments never extend the TTL (a fixed window from the first increment).
   */
  increment(key: string, ttl: number): Promise<number>
  close(): Promise<void>
}

/** Lua: INCR, and EXPIRE only on creation (better-auth's increment contract), in one atomic step. */
const INCREMENT = `local v = redis.call('INCR', KEYS[1])
if v == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return v`

export interface RedisStorageOptions {
  /** Prepended to every key; "gatehouse:" by default. */
  prefix?: string
}

/** Connects (resolving once Redis answers) and returns the secondary storage on it. */
export async function redisSecondaryStorage(url: string, options: RedisStorageOptions = {}): Promise<SecondaryStorage & { client: Redis }> {
  const client = new Redis(url.replace(/^valkey(s?):\/\//, 'redis$1://'), {
    keyPrefix: options.prefix ?? 'gatehouse:',
    lazyConnect: true,
    // A request must not hang on a lost Redis: commands fail fast while it reconnects.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // Nor on a Redis that accepts commands but does not answer them.
    commandTimeout: 2_000,
  })
  // Errors surface on the commands; the client reconnects by itself.
  client.on('error', () => {})
  await client.connect()
  client.defineCommand('gatehouseIncrement', { numberOfKeys: 1, lua: INCREMENT })
  const seconds = (ttl: number) => Math.max(1, Math.ceil(ttl))
  return {
    client,
    get: (key) => client.get(key),
    async set(key, value, ttl) {
      if (ttl !== undefined && ttl > 0) await client.set(key, value, 'EX', seconds(ttl))
      else await client.set(key, value)
    },
    async delete(key) {
      await client.del(key)
    },
    getAndDelete: (key) => client.getdel(key),
    async increment(key, ttl) {
      const run = (client as unknown as { gatehouseIncrement(key: string, ttl: number): Promise<number> }).gatehouseIncrement
      return Number(await run.call(client, key, seconds(ttl)))
    },
    async close() {
      await client.quit().catch(() => client.disconnect())
    },
  }
}
