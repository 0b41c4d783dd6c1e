import { execFileSync } from 'node:child_process'
import { generateKeyPairSync, X509Certificate } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { selfSignedCertificate } from '../../../server/features/saml/cert.js'
import { warnSkipped } from '../../helpers/engines.js'

/** The self-signed certificate builder, read back by node:crypto and by OpenSSL. */

function opensslMissing(): string | undefined {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return undefined
  } catch {
    return 'openssl is not installed (Debian: openssl)'
  }
}
const noOpenssl = opensslMissing()
warnSkipped('the SAML certificate check with openssl', noOpenssl)

describe('selfSignedCertificate', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const notBefore = new Date(Date.UTC(2026, 0, 1))
  const pem = selfSignedCertificate({ privateKey, commonName: 'auth.example.lan', notBefore, notAfter: new Date(Date.UTC(2056, 0, 1)) })

  it('is a valid self-signed X.509 certificate for the key (node:crypto)', () => {
    const x = new X509Certificate(pem)
    expect(x.subject).toBe('CN=auth.example.lan')
    expect(x.issuer).toBe('CN=auth.example.lan')
    expect(x.verify(x.publicKey)).toBe(true)
    expect(x.checkPrivateKey(privateKey)).toBe(true)
    expect(new Date(x.validFrom).getTime()).toBe(notBefore.getTime())
    // 2056: GeneralizedTime (UTCTime ends with 2049).
    expect(new Date(x.validTo).getUTCFullYear()).toBe(2056)
    expect(x.serialNumber).toMatch(/^[0-9A-F]+$/)
  })

  it.skipIf(noOpenssl)('OpenSSL reads it and verifies its signature', () => {
    const dir = mkdtempSync(join(tmpdir(), 'saml-cert-'))
    try {
      const file = join(dir, 'cert.pem')
      writeFileSync(file, pem)
      const text = execFileSync('openssl', ['x509', '-in', file, '-noout', '-text'], { encoding: 'utf8' })
      expect(text).toContain('Version: 3 (0x2)')
      expect(text).toContain('Signature Algorithm: sha256WithRSAEncryption')
      expect(text).toContain('Public-Key: (2048 bit)')
      expect(execFileSync('openssl', ['verify', '-CAfile', file, '-check_ss_sig', '-no_check_time', file], { encoding: 'utf8' })).toContain(
        'OK',
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
