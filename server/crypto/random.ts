import { randomBytes, randomInt } from 'node:crypto'

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const LOWER_ALPHANUMERIC = '0123456789abcdefghijklmnopqrstuvwxyz'

/** Uniform random string over `alphabet` from the CSPRNG (rejection sampling, no modulo bias). */
export function randomString(length: number, alphabet: string = ALPHANUMERIC): string {
  const n = alphabet.length
  const limit = 256 - (256 % n)
  let out = ''
  while (out.length < length) {
    const bytes = randomBytes(Math.max(16, (length - out.length) * 2))
    for (const b of bytes) {
      if (b < limit) {
        out += alphabet[b % n]
        if (out.length === length) break
      }
    }
  }
  return out
}

/** Ids and session tokens: 32 characters [A-Za-z0-9] (SPEC §3). */
export const generateId = (length = 32): string => randomString(length)

/** Delete-account tokens: 32 characters [0-9a-z] (SPEC §4). */
export const generateLowerToken = (length = 32): string => randomString(length, LOWER_ALPHANUMERIC)

export { randomInt }
