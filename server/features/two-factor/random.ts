import { createHash, timingSafeEqual } from 'node:crypto'
export { randomString } from '../../crypto/random.js'

/** Equal strings, compared without an early exit (hashed first so lengths do not leak either). */
export function safeEqualStrings(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest())
}
