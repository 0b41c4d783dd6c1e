import { Secret, TOTP } from 'otpauth'
import { decryptSecret, encryptSecret, revealSecret } from '../../crypto/encrypt.js'
import { randomString, safeEqualStrings } from './random.js'
import type { TwoFactorConfig } from './config.js'

/** The rules of the codes themselves: TOTP (RFC 6238 via otpauth), backup codes, mailed codes. No I/O. */

const SECRET_PURPOSE = 'two-factor-secret'
const BACKUP_PURPOSE = 'two-factor-backup-codes'

/** A new TOTP secret: 32 random characters used as key bytes, like better-auth's. */
export const newTotpSecret = (): string => randomString(32)

export const sealTotpSecret = (appSecret: string, secret: string): string => encryptSecret(appSecret, secret, SECRET_PURPOSE)
/** The stored secret in clear (a clear value from an imported database is read as is); null if it does not open. */
export const openTotpSecret = (appSecret: string, stored: string): string | null => revealSecret(appSecret, stored, SECRET_PURPOSE)

function totp(secret: string, conf: TwoFactorConfig['totpOptions'], issuer = 'Gatehouse', label = 'user'): TOTP {
  return new TOTP({ issuer, label, secret: Secret.fromUTF8(secret), digits: conf.digits, period: conf.period, algorithm: 'SHA1' })
}

export const totpURI = (secret: string, conf: TwoFactorConfig['totpOptions'], issuer: string, email: string): string =>
  totp(secret, conf, issuer, email).toString()

/**
 * The time step a code belongs to, if it is valid within ±window steps of `now`; null otherwise.
 * The caller refuses a step at or before the last one accepted (a code works once).
 */
export function matchTotp(secret: string, code: string, now: number, conf: TwoFactorConfig['totpOptions']): number | null {
  if (!/^\d+$/.test(code) || code.length !== conf.digits) return null
  const delta = totp(secret, conf).validate({ token: code, timestamp: now, window: conf.window })
  if (delta === null) return null
  return Math.floor(now / 1000 / conf.period) + delta
}

/** `amount` codes `xxxxx-xxxxx` (better-auth's shape). */
export function newBackupCodes(conf: TwoFactorConfig['backupCodeOptions']): string[] {
  return Array.from({ length: conf.amount }, () => {
    const code = randomString(conf.length)
    const half = Math.floor(conf.length / 2)
    return `${code.slice(0, half)}-${code.slice(half)}`
  })
}

export const sealBackupCodes = (appSecret: string, codes: string[]): string =>
  encryptSecret(appSecret, JSON.stringify(codes), BACKUP_PURPOSE)

export function openBackupCodes(appSecret: string, stored: string): string[] | null {
  const json = stored.startsWith('enc:') ? decryptSecret(appSecret, stored, BACKUP_PURPOSE) : stored
  if (json === null) return null
  try {
    const parsed: unknown = JSON.parse(json)
    return Array.isArray(parsed) && parsed.every((c) => typeof c === 'string') ? parsed : null
  } catch {
    return null
  }
}

/** The codes left after spending `code`, or null when it is not one of them (compared in constant time each). */
export function spendBackupCode(codes: string[], code: string): string[] | null {
  let found = -1
  codes.forEach((candidate, i) => {
    if (safeEqualStrings(candidate, code.trim())) found = i
  })
  return found < 0 ? null : codes.filter((_, i) => i !== found)
}

export const newMailedCode = (digits: number): string => randomString(digits, '0123456789')
