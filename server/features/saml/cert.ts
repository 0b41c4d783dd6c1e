import { createPublicKey, type KeyObject, randomBytes, sign } from 'node:crypto'

/**
 * A self-signed X.509 v3 certificate (RFC 5280) for the identity provider's signing key: node:crypto
 * reads certificates (X509Certificate) but makes none, and a SAML peer only needs the certificate as
 * the carrier of the public key. The DER below is the minimum: version, serial, sha256WithRSAEncryption,
 * the same one-CN name as issuer and subject, validity, the key's SubjectPublicKeyInfo as node:crypto
 * exports it, and the RSA-SHA256 signature over the to-be-signed part.
 * tests/features/saml/cert.test.ts reads the result back with X509Certificate and `openssl x509`.
 */

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n])
  const bytes: number[] = []
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}

const tlv = (tag: number, content: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), length(content.length), content])
const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items))
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items))
const NULL = Buffer.from([0x05, 0x00])

/** A positive INTEGER from big-endian bytes (a leading zero added when the high bit is set). */
function integer(bytes: Buffer): Buffer {
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0 && ((bytes[start + 1] ?? 0) & 0x80) === 0) start++
  const trimmed = bytes.subarray(start)
  return tlv(0x02, (trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed)
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number)
  const out: number[] = [(parts[0] ?? 0) * 40 + (parts[1] ?? 0)]
  for (const part of parts.slice(2)) {
    const chunk: number[] = [part & 0x7f]
    for (let v = Math.floor(part / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f))
    out.push(...chunk)
  }
  return tlv(0x06, Buffer.from(out))
}

/** UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 §4.1.2.5), to the second, in UTC. */
function time(date: Date): Buffer {
  const iso = date.toISOString()
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii')) : tlv(0x18, Buffer.from(digits, 'ascii'))
}

const name = (commonName: string): Buffer => sequence(set(sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))))

const SHA256_WITH_RSA = sequence(oid('1.2.840.113549.1.1.11'), NULL)

export interface CertificateInput {
  privateKey: KeyObject
  commonName: string
  notBefore: Date
  notAfter: Date
}

/** The certificate as PEM, self-signed with `privateKey` (RSA). */
export function selfSignedCertificate(input: CertificateInput): string {
  const spki = createPublicKey(input.privateKey).export({ type: 'spki', format: 'der' })
  const serial = randomBytes(16)
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x01
  const subject = name(input.commonName)
  const tbs = sequence(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    SHA256_WITH_RSA,
    subject,
    sequence(time(input.notBefore), time(input.notAfter)),
    subject,
    spki,
  )
  const signature = sign('sha256', tbs, input.privateKey)
  const der = sequence(tbs, SHA256_WITH_RSA, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])))
  const base64 = der.toString('base64').replace(/.{1,64}/g, '$&\n')
  return `-----BEGIN CERTIFICATE-----\n${base64}-----END CERTIFICATE-----\n`
}

/** The certificate's base64 DER body (what `<ds:X509Certificate>` holds). */
export const certificateBody = (pem: string): string => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '')
