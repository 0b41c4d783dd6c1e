import { Secret, TOTP } from 'otpauth'
import { describe, expect, it } from 'vitest'
import { matchTotp, newBackupCodes, spendBackupCode } from '../../../server/features/two-factor/codes.js'
import type { TwoFactorConfig } from '../../../server/features/two-factor/config.js'

/**
 * The rules of the second-factor codes alone (server/features/two-factor/codes.ts): which time
 * step a TOTP code matches within the window, and spending a backup code. Codes are computed
 * independently with otpauth from the same secret.
 */
const secret = 'abcdefghijklmnopqrstuvwxyz012345'
const conf: TwoFactorConfig['totpOptions'] = { digits: 6, period: 30, window: 1, disable: false }
const reference = new TOTP({ secret: Secret.fromUTF8(secret), digits: 6, period: 30, algorithm: 'SHA1' })
// The middle of a step, so that ±n steps are whole steps away.
const now = 1_800_000_015_000
const step = Math.floor(now / 30_000)
const codeAt = (steps: number, at = now) => reference.generate({ timestamp: at + steps * 30_000 })

describe('matchTotp', () => {
  it('answers the step of a code within ±window steps, and null outside', () => {
    expect(matchTotp(secret, codeAt(0), now, conf)).toBe(step)
    expect(matchTotp(secret, codeAt(-1), now, conf)).toBe(step - 1)
    expect(matchTotp(secret, codeAt(1), now, conf)).toBe(step + 1)
    for (const steps of [-2, -3, -5, -10, 2, 3, 5]) expect([steps, matchTotp(secret, codeAt(steps), now, conf)]).toEqual([steps, null])
  })

  it('follows the configured window and period', () => {
    expect(matchTotp(secret, codeAt(-1), now, { ...conf, window: 0 })).toBeNull()
    expect(matchTotp(secret, codeAt(0), now, { ...conf, window: 0 })).toBe(step)
    expect(matchTotp(secret, codeAt(-2), now, { ...conf, window: 2 })).toBe(step - 2)
    expect(matchTotp(secret, codeAt(-3), now, { ...conf, window: 2 })).toBeNull()
    const sixty = new TOTP({ secret: Secret.fromUTF8(secret), digits: 6, period: 60, algorithm: 'SHA1' })
    expect(matchTotp(secret, sixty.generate({ timestamp: now - 60_000 }), now, { ...conf, period: 60 })).toBe(Math.floor(now / 60_000) - 1)
    expect(matchTotp(secret, sixty.generate({ timestamp: now - 120_000 }), now, { ...conf, period: 60 })).toBeNull()
  })

  it('refuses codes of the wrong length or with non-digits, and another secret', () => {
    const code = codeAt(0)
    expect(matchTotp(secret, code.slice(1), now, conf)).toBeNull()
    expect(matchTotp(secret, `${code}0`, now, conf)).toBeNull()
    expect(matchTotp(secret, ` ${code.slice(1)}`, now, conf)).toBeNull()
    expect(matchTotp(secret, `${code.slice(0, 5)}a`, now, conf)).toBeNull()
    expect(matchTotp('another-secret-0123456789abcdefgh', code, now, conf)).toBeNull()
    const eight = new TOTP({ secret: Secret.fromUTF8(secret), digits: 8, period: 30, algorithm: 'SHA1' })
    expect(matchTotp(secret, eight.generate({ timestamp: now }), now, { ...conf, digits: 8 })).toBe(step)
    expect(matchTotp(secret, eight.generate({ timestamp: now }), now, conf)).toBeNull()
  })
})

describe('spendBackupCode', () => {
  const codes = ['aaaaa-11111', 'bbbbb-22222', 'ccccc-33333']

  it('answers the codes left without the one spent, in order', () => {
    expect(spendBackupCode(codes, 'bbbbb-22222')).toEqual(['aaaaa-11111', 'ccccc-33333'])
    expect(spendBackupCode(codes, 'aaaaa-11111')).toEqual(['bbbbb-22222', 'ccccc-33333'])
    expect(spendBackupCode(codes, ' ccccc-33333 ')).toEqual(['aaaaa-11111', 'bbbbb-22222'])
    expect(codes).toHaveLength(3)
  })

  it('answers null for anything but an exact code', () => {
    for (const wrong of ['', 'bbbbb-2222', 'bbbbb-222222', 'BBBBB-22222', 'bbbbb22222', 'bbbbb-22223', 'aaaaa-11111,bbbbb-22222'])
      expect([wrong, spendBackupCode(codes, wrong)]).toEqual([wrong, null])
    expect(spendBackupCode([], 'aaaaa-11111')).toBeNull()
  })

  it('spends one code at a time: spent codes stay spent, and a duplicate goes once per use', () => {
    const left = spendBackupCode(codes, 'aaaaa-11111') as string[]
    expect(spendBackupCode(left, 'aaaaa-11111')).toBeNull()
    expect(spendBackupCode(['x-1', 'x-1', 'y-2'], 'x-1')).toHaveLength(2)
  })

  it('new codes are distinct and shaped xxxxx-xxxxx', () => {
    const fresh = newBackupCodes({ amount: 10, length: 10 })
    expect(fresh).toHaveLength(10)
    expect(new Set(fresh).size).toBe(10)
    for (const code of fresh) expect(code).toMatch(/^[A-Za-z0-9]{5}-[A-Za-z0-9]{5}$/)
  })
})
