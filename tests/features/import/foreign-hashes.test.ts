import { execFileSync } from 'node:child_process'
import { pbkdf2Sync, randomBytes } from 'node:crypto'
import { hash as argon2Hash } from '@node-rs/argon2'
import bcrypt from 'bcryptjs'
import { hashPassword as betterAuthHash } from 'better-auth/crypto'
import { describe, expect, it } from 'vitest'
import { recognizeHash, verifyForeignHash } from '../../../server/crypto/foreign-hashes.js'
import { verifyPassword, verifySignInPassword } from '../../../server/crypto/password.js'

/**
 * Imported hashes (issue 29), each made by an independent implementation (bcryptjs, @node-rs/argon2,
 * node:crypto PBKDF2, `openssl passwd -6`, better-auth), never by Gatehouse's code.
 */
const opensslSha512 = (password: string, salt: string) =>
  execFileSync('openssl', ['passwd', '-6', '-salt', salt, password], { encoding: 'utf8' }).trim()

const django = (password: string, salt: string, iterations: number, digest = 'sha256') =>
  `pbkdf2_${digest}$${iterations}$${salt}$${pbkdf2Sync(password, salt, iterations, digest === 'sha512' ? 64 : 32, digest).toString('base64')}`

async function expectVerifies(hash: string, format: string, password: string) {
  expect(recognizeHash(hash)).toBe(format)
  expect(await verifySignInPassword(hash, password)).toEqual({ ok: true, rehash: true })
  expect(await verifySignInPassword(hash, `${password}x`)).toEqual({ ok: false, rehash: false })
  // Nothing but a password sign-in accepts a foreign hash.
  expect(await verifyPassword(hash, password)).toBe(false)
}

describe('foreign password hashes', () => {
  it('bcrypt $2a$, $2b$ and $2y$ (bcryptjs)', async () => {
    const b = bcrypt.hashSync('hunter2 hunter2', 8)
    expect(b.startsWith('$2b$')).toBe(true)
    await expectVerifies(b, 'bcrypt', 'hunter2 hunter2')
    await expectVerifies(`$2a$${b.slice(4)}`, 'bcrypt', 'hunter2 hunter2')
    // PHP's $2y$ names the same algorithm.
    await expectVerifies(`$2y$${b.slice(4)}`, 'bcrypt', 'hunter2 hunter2')
  })

  it('argon2id and argon2i PHC strings (@node-rs/argon2)', async () => {
    const id = await argon2Hash('pässwörd', { algorithm: 2 /* Argon2id */, memoryCost: 4096, timeCost: 2, parallelism: 1 })
    expect(id.startsWith('$argon2id$v=19$')).toBe(true)
    await expectVerifies(id, 'argon2id', 'pässwörd')
    const i = await argon2Hash('pässwörd', { algorithm: 1 /* Argon2i */, memoryCost: 4096, timeCost: 3, parallelism: 2 })
    expect(i.startsWith('$argon2i$v=19$')).toBe(true)
    await expectVerifies(i, 'argon2i', 'pässwörd')
  })

  it('Django PBKDF2 (node:crypto), sha256 and sha512', async () => {
    await expectVerifies(django('correct horse', 'Zx8aq3N1b', 1000), 'pbkdf2', 'correct horse')
    await expectVerifies(django('correct horse', 'Zx8aq3N1b', 1200, 'sha512'), 'pbkdf2', 'correct horse')
  })

  it('PHC-style PBKDF2 with a binary salt, as a Keycloak export carries it (node:crypto)', async () => {
    const salt = randomBytes(16)
    const key = pbkdf2Sync('s3cret!', salt, 2700, 64, 'sha512')
    await expectVerifies(`$pbkdf2-sha512$i=2700$${salt.toString('base64')}$${key.toString('base64')}`, 'pbkdf2', 's3cret!')
  })

  it('SHA-512 crypt (openssl passwd -6), default and explicit rounds', async () => {
    await expectVerifies(opensslSha512('Hello world!', 'saltstring'), 'sha512-crypt', 'Hello world!')
    await expectVerifies(opensslSha512('Hello world!', 'rounds=10000$saltstringsaltst'), 'sha512-crypt', 'Hello world!')
    await expectVerifies(
      opensslSha512('a much longer password, longer than sixty-four bytes of text, to wrap', 'ab'),
      'sha512-crypt',
      'a much longer password, longer than sixty-four bytes of text, to wrap',
    )
    // The specification's own test vector.
    await expectVerifies(
      '$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.',
      'sha512-crypt',
      'Hello world!',
    )
  })

  it('better-auth scrypt is native: verified, never rehashed', async () => {
    const hash = await betterAuthHash('correct horse')
    expect(recognizeHash(hash)).toBe('scrypt')
    expect(await verifySignInPassword(hash, 'correct horse')).toEqual({ ok: true, rehash: false })
  })

  it('refuses unknown and truncated hashes', async () => {
    const b = bcrypt.hashSync('x', 4)
    expect(recognizeHash(b.slice(0, -5))).toBeNull()
    expect(recognizeHash('$1$abc$def')).toBeNull()
    expect(recognizeHash('md5:5f4dcc3b5aa765d61d8327deb882cf99')).toBeNull()
    expect(recognizeHash('plaintext')).toBeNull()
    expect(recognizeHash(`pbkdf2_sha256$99999999$salt$${'A'.repeat(44)}`)).toBeNull()
    expect(await verifySignInPassword(b.slice(0, -5), 'x')).toEqual({ ok: false, rehash: false })
    // A malformed argon2 body is a mismatch, not a crash.
    expect(await verifyForeignHash('argon2id', '$argon2id$v=19$m=4096,t=2,p=1$AAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAA', 'x')).toBe(false)
  })
})
