import { createHash, pbkdf2, timingSafeEqual } from 'node:crypto'
import { passwordHashQueue } from './hash-queue.js'

/**
 * Password hashes made by other systems, kept as they came when users are imported (issue 29) and
 * verified only by a password sign-in, which then replaces them with Gatehouse's scrypt:
 *
 * - `scrypt`: better-auth's and Gatehouse's own `<saltHex>:<keyHex>` (not foreign; listed so an
 *   import can tell every accepted format apart);
 * - `bcrypt`: `$2a$`, `$2b$`, `$2y$` (bcryptjs, pure JavaScript);
 * - `argon2id` / `argon2i`: PHC strings `$argon2id$v=19$m=…,t=…,p=…$salt$hash` (@node-rs/argon2,
 *   prebuilt binaries from npm, on the thread pool);
 * - `pbkdf2`: Django's `pbkdf2_sha256$<iterations>$<salt>$<base64>` (also `pbkdf2_sha1`,
 *   `pbkdf2_sha512`; the salt is the text itself) and the PHC-style
 *   `$pbkdf2-sha256$i=<iterations>$<base64 salt>$<base64 hash>` (also `-sha1`, `-sha512`; the salt
 *   is binary, as Keycloak stores it);
 * - `sha512-crypt`: `$6$[rounds=N$]<salt>$<hash>` (glibc crypt, Authelia, /etc/shadow), node:crypto
 *   after Ulrich Drepper's specification.
 *
 * Foreign passwords are compared as given (no NFKC normalisation: the old system did not apply it).
 */
export type HashFormat = 'scrypt' | 'bcrypt' | 'argon2id' | 'argon2i' | 'pbkdf2' | 'sha512-crypt'

/**
 * Every format recognizeHash accepts, as a person recognizes it: the one list an import's "unknown
 * format" refusal and the command's help name (docs/IMPORT.md's table says the same).
 */
export const ACCEPTED_HASH_FORMATS = [
  'better-auth scrypt (<saltHex>:<keyHex>)',
  'bcrypt ($2a$, $2b$, $2y$)',
  'argon2id ($argon2id$)',
  'argon2i ($argon2i$)',
  'Django PBKDF2 (pbkdf2_sha256$, pbkdf2_sha1$, pbkdf2_sha512$)',
  'PBKDF2 with a binary salt ($pbkdf2-sha256$, $pbkdf2-sha1$, $pbkdf2-sha512$)',
  'SHA-512 crypt ($6$)',
] as const

const SCRYPT = /^[0-9a-f]{2,}:[0-9a-f]{128}$/i
const BCRYPT = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/
const ARGON2 = /^\$(argon2id|argon2i)\$v=(16|19)\$m=\d{1,7},t=\d{1,4},p=\d{1,3}\$[A-Za-z0-9+/]{8,}={0,2}\$[A-Za-z0-9+/]{16,}={0,2}$/
const DJANGO_PBKDF2 = /^pbkdf2_(sha1|sha256|sha512)\$(\d{1,8})\$([^$]{1,128})\$([A-Za-z0-9+/]{16,}={0,2})$/
const PHC_PBKDF2 = /^\$pbkdf2-(sha1|sha256|sha512)\$i=(\d{1,8})(?:,l=\d{1,3})?\$([A-Za-z0-9+/.]{4,}={0,2})\$([A-Za-z0-9+/.]{16,}={0,2})$/
const SHA512_CRYPT = /^\$6\$(?:rounds=(\d{1,9})\$)?([^$:\n]{0,16})\$([./0-9A-Za-z]{86})$/

/** Iteration and round counts above these are refused at import: one sign-in must not take minutes. */
export const MAX_PBKDF2_ITERATIONS = 10_000_000
export const MAX_SHA512_ROUNDS = 9_999_999

/** The format of a stored or imported hash, or null when Gatehouse cannot verify it. */
export function recognizeHash(hash: string): HashFormat | null {
  if (SCRYPT.test(hash)) return 'scrypt'
  if (BCRYPT.test(hash)) return 'bcrypt'
  const argon = ARGON2.exec(hash)
  if (argon) return argon[1] as 'argon2id' | 'argon2i'
  const pbkdf2Match = DJANGO_PBKDF2.exec(hash) ?? PHC_PBKDF2.exec(hash)
  if (pbkdf2Match) {
    const iterations = Number(pbkdf2Match[2])
    return iterations >= 1 && iterations <= MAX_PBKDF2_ITERATIONS ? 'pbkdf2' : null
  }
  const crypt = SHA512_CRYPT.exec(hash)
  if (crypt) return crypt[1] === undefined || Number(crypt[1]) <= MAX_SHA512_ROUNDS ? 'sha512-crypt' : null
  return null
}

function equal(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

function fromBase64(text: string): Buffer {
  // The PHC strings use unpadded base64; passlib's variant writes '.' for '+'.
  return Buffer.from(text.replace(/\./g, '+'), 'base64')
}

function pbkdf2Async(password: string, salt: Buffer, iterations: number, length: number, digest: string): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    pbkdf2(password, salt, iterations, length, digest, (err, key) => (err ? reject(err) : resolve(key))),
  )
}

async function verifyPbkdf2(hash: string, password: string): Promise<boolean> {
  const django = DJANGO_PBKDF2.exec(hash)
  const phc = django ? null : PHC_PBKDF2.exec(hash)
  const match = django ?? phc
  if (!match) return false
  const [, digest, iterations, saltText, keyText] = match as unknown as [string, string, string, string, string]
  const salt = django ? Buffer.from(saltText, 'utf8') : fromBase64(saltText)
  const expected = fromBase64(keyText)
  if (expected.length === 0) return false
  return equal(await pbkdf2Async(password, salt, Number(iterations), expected.length, digest), expected)
}

const CRYPT_ALPHABET = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** The 86 characters of a SHA-512 crypt digest: glibc's byte order, 6 bits a character, low bits first. */
function cryptBase64(digest: Buffer): string {
  let out = ''
  const emit = (b2: number, b1: number, b0: number, n: number) => {
    let w = (b2 << 16) | (b1 << 8) | b0
    for (let i = 0; i < n; i++) {
      out += CRYPT_ALPHABET[w & 0x3f]
      w >>= 6
    }
  }
  for (let i = 0; i < 21; i++) {
    const a = digest[i] as number
    const b = digest[i + 21] as number
    const c = digest[i + 42] as number
    if (i % 3 === 0) emit(a, b, c, 4)
    else if (i % 3 === 1) emit(b, c, a, 4)
    else emit(c, a, b, 4)
  }
  emit(0, 0, digest[63] as number, 2)
  return out
}

const sha512 = (...parts: Buffer[]): Buffer => {
  const h = createHash('sha512')
  for (const part of parts) h.update(part)
  return h.digest()
}

/** Repeats `block` (64 bytes) to `length` bytes. */
function stretch(block: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length)
  for (let i = 0; i < length; i += 64) block.copy(out, i, 0, Math.min(64, length - i))
  return out
}

/** SHA-512 crypt ($6$) of Drepper's specification, steps 1-22; returns the digest's 86 characters. */
export function sha512CryptDigest(password: string, saltText: string, rounds: number): string {
  const p = Buffer.from(password, 'utf8')
  const s = Buffer.from(saltText, 'utf8').subarray(0, 16)
  const b = sha512(p, s, p)
  const a = createHash('sha512').update(p).update(s)
  a.update(stretch(b, p.length))
  for (let i = p.length; i > 0; i >>= 1) a.update(i & 1 ? b : p)
  let digest = a.digest()
  const dpHash = createHash('sha512')
  for (let i = 0; i < p.length; i++) dpHash.update(p)
  const pBytes = stretch(dpHash.digest(), p.length)
  const dsHash = createHash('sha512')
  for (let i = 0; i < 16 + (digest[0] as number); i++) dsHash.update(s)
  const sBytes = dsHash.digest().subarray(0, s.length)
  for (let r = 0; r < rounds; r++) {
    const c = createHash('sha512')
    c.update(r & 1 ? pBytes : digest)
    if (r % 3) c.update(sBytes)
    if (r % 7) c.update(pBytes)
    c.update(r & 1 ? digest : pBytes)
    digest = c.digest()
  }
  return cryptBase64(digest)
}

function verifySha512Crypt(hash: string, password: string): boolean {
  const match = SHA512_CRYPT.exec(hash)
  if (!match) return false
  const rounds = match[1] === undefined ? 5000 : Math.min(Math.max(Number(match[1]), 1000), 999_999_999)
  const actual = sha512CryptDigest(password, match[2] ?? '', rounds)
  return equal(Buffer.from(actual), Buffer.from(match[3] as string))
}

/**
 * Verifies a password against a hash of a foreign format (never scrypt: that is password.ts's).
 * Runs under the process's password-hashing queue, like every other hash.
 */
export function verifyForeignHash(format: Exclude<HashFormat, 'scrypt'>, hash: string, password: string): Promise<boolean> {
  return passwordHashQueue.run(async () => {
    switch (format) {
      case 'bcrypt': {
        const { default: bcrypt } = await import('bcryptjs')
        // bcryptjs knows $2a$ and $2b$; $2y$ (PHP's name for the fixed $2a$) is the same algorithm.
        return bcrypt.compare(password, hash.startsWith('$2y$') ? `$2b$${hash.slice(4)}` : hash)
      }
      case 'argon2id':
      case 'argon2i': {
        const { verify } = await import('@node-rs/argon2')
        return verify(hash, password).catch(() => false)
      }
      case 'pbkdf2':
        return verifyPbkdf2(hash, password)
      case 'sha512-crypt':
        return verifySha512Crypt(hash, password)
    }
  })
}
