import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { recognizeHash, verifyForeignHash } from './foreign-hashes.js'
import { passwordHashQueue } from './hash-queue.js'

/**
 * scrypt exactly as SPEC §9 and better-auth: N=16384, r=16, p=1, 64-byte key, the password
 * NFKC-normalised, a 16-byte random salt whose *hex string* is the scrypt salt, stored as
 * "saltHex:keyHex". Hashes are interchangeable with better-auth's.
 *
 * node:crypto's async scrypt runs on libuv's thread pool, so hashing never blocks the event loop.
 * The parameters need 128·r·(N+p+2) ≈ 32 MiB + 6 KiB, just over Node's 32 MiB default maxmem.
 */
const PARAMS = { N: 16384, r: 16, p: 1, maxmem: 64 * 1024 * 1024 } as const
const KEY_LENGTH = 64

function deriveKey(password: string, salt: string): Promise<Buffer> {
  return passwordHashQueue.run(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, PARAMS, (err, key) => (err ? reject(err) : resolve(key)))
      }),
  )
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16).toString('hex')
  const key = await deriveKey(password, salt)
  return `${salt}:${key.toString('hex')}`
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  const [salt, keyHex] = hash.split(':')
  if (!salt || !keyHex || !/^[0-9a-f]+$/i.test(keyHex)) return false
  const expected = Buffer.from(keyHex, 'hex')
  const actual = await deriveKey(password, salt)
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}

/** The outcome of a sign-in's password check: `rehash` when it matched a foreign hash to replace. */
export interface PasswordCheck {
  ok: boolean
  rehash: boolean
}

/**
 * A password sign-in's check of the stored hash: Gatehouse's scrypt, or a hash imported from
 * another system (foreign-hashes.ts), which matches only here and is then to be replaced by
 * scrypt in the same request (`rehash`). Every other check (change-password, two-factor, delete)
 * uses verifyPassword, which accepts scrypt only.
 */
export async function verifySignInPassword(hash: string, password: string): Promise<PasswordCheck> {
  const format = recognizeHash(hash)
  if (format === null || format === 'scrypt') return { ok: await verifyPassword(hash, password), rehash: false }
  const ok = await verifyForeignHash(format, hash, password)
  return { ok, rehash: ok }
}

/**
 * Spends the same work as a real verification for an identity that does not exist, so the
 * answer time does not reveal whether an account exists (SPEC §5).
 */
const DUMMY_HASH = `${'0'.repeat(32)}:${'0'.repeat(128)}`
export async function burnPasswordCheck(password: string): Promise<void> {
  await verifyPassword(DUMMY_HASH, password)
}
