import { hashPassword as betterAuthHash, verifyPassword as betterAuthVerify } from 'better-auth/crypto'
import { describe, expect, it } from 'vitest'
import { hashPassword, verifyPassword } from '../../server/crypto/password.js'

describe('scrypt password hashes, interchangeable with better-auth', () => {
  it('stores salt:key in hex with a 16-byte salt and a 64-byte key', async () => {
    const hash = await hashPassword('correct horse')
    expect(hash).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/)
    expect(await verifyPassword(hash, 'correct horse')).toBe(true)
    expect(await verifyPassword(hash, 'correct horsf')).toBe(false)
  })

  it('verifies a hash produced by the better-auth package, and better-auth verifies ours', async () => {
    const theirs = await betterAuthHash('pässwörd ﬁ')
    expect(await verifyPassword(theirs, 'pässwörd ﬁ')).toBe(true)
    // NFKC: the ligature ﬁ and "fi" are the same password.
    expect(await verifyPassword(theirs, 'pässwörd fi')).toBe(true)
    expect(await verifyPassword(theirs, 'passwort')).toBe(false)
    const ours = await hashPassword('another secret')
    expect(await betterAuthVerify({ hash: ours, password: 'another secret' })).toBe(true)
  })

  it('treats malformed stored hashes as a mismatch', async () => {
    expect(await verifyPassword('garbage', 'x')).toBe(false)
    expect(await verifyPassword('abc:zz', 'x')).toBe(false)
  })
})
