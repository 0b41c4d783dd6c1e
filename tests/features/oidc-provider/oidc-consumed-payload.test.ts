import { describe, expect, it } from 'vitest'
import { consumedPayload } from '../../../server/features/oidc-provider/batch.js'

/** A consumed model's payload (server/features/oidc-provider/batch.ts): the text oidc-provider's adapter contract expects. */
describe('consumedPayload', () => {
  const at = new Date(Date.UTC(2026, 0, 1, 12, 0, 0, 750))
  const slow = (payload: string) =>
    JSON.stringify({ ...(JSON.parse(payload) as Record<string, unknown>), consumed: Math.floor(at.getTime() / 1000) })

  it('adds `consumed` (epoch seconds) last, the same text as parsing and stringifying again', () => {
    for (const payload of [
      {
        iat: 1,
        exp: 2,
        kind: 'RefreshToken',
        jti: 'abc',
        scope: 'openid email',
        claims: { id_token: { email: null } },
        note: 'a "consumed": b',
      },
      { a: '}' },
      { nested: { consumed: 5 } },
    ]) {
      const text = JSON.stringify(payload)
      expect(consumedPayload(text, at)).toBe(slow(text))
      expect(JSON.parse(consumedPayload(text, at))).toEqual({ ...payload, consumed: 1767268800 })
    }
  })

  it('replaces an existing `consumed` and handles an empty object', () => {
    expect(consumedPayload('{"jti":"x","consumed":1}', at)).toBe('{"jti":"x","consumed":1767268800}')
    expect(consumedPayload('{}', at)).toBe('{"consumed":1767268800}')
  })
})
