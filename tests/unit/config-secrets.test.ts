import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { configSchema } from '../../server/config-schema.js'
import { configSecretPatterns, holdsSecret, isSecretPath, type SecretPattern, secretPatternsOf } from '../../server/config/secret-paths.js'
import { auditableLeaves, diffLeaves } from '../../server/core/config-audit.js'
import { encryptSecret } from '../../server/crypto/encrypt.js'
import { toCsv } from '../../server/features/audit/export.js'
import { withoutSecrets } from '../../server/features/settings/panel.js'
import type { AuditEventView } from '../../server/panel-frame/shapes.js'

/**
 * Issue 37 §10: no secret field's value, in clear or sealed, reaches a config audit entry, its
 * export (CSV and JSON), the known file or the Settings view's copy of the config. Every field the
 * schema marks `secret()` is planted (the list is read off the schema, so a new secret field is
 * covered the day it is marked), and a field named like a secret that is not marked fails here.
 */

const AUTH_SECRET = 'test-auth-secret-at-least-32-characters-long'
type Json = Record<string, unknown>

/** Sets a planted value at a pattern's path: `*` is a key of our own, `[]` the first element (a minimal valid generic provider). */
function plant(config: Json, pattern: SecretPattern, value: string): void {
  let node: Json = config
  pattern.forEach((segment, i) => {
    const last = i === pattern.length - 1
    const key = segment === '*' ? 'planted' : segment
    if (last) {
      node[key] = value
      return
    }
    if (pattern[i + 1] === '[]') {
      const list = (Array.isArray(node[key]) ? node[key] : []) as Json[]
      list[0] ??= {
        providerId: 'planted',
        clientId: 'planted-client',
        discoveryUrl: 'https://idp.example.com/.well-known/openid-configuration',
      }
      node[key] = list
      node = list as unknown as Json
      return
    }
    if (segment === '[]') {
      node = (node as unknown as Json[])[0] as Json
      return
    }
    node[key] = typeof node[key] === 'object' && node[key] !== null ? node[key] : {}
    node = node[key] as Json
  })
}

/** The default config with every secret field planted: its values and every piece they could leak as. */
function planted(kind: 'plain' | 'sealed'): { config: Json; leaks: string[] } {
  const config = structuredClone(configSchema.parse({})) as unknown as Json
  const leaks: string[] = []
  configSecretPatterns().forEach((pattern, i) => {
    const clear = `PLANTED-${kind}-${i}-${pattern.join('-')}`
    const value = kind === 'plain' ? clear : encryptSecret(AUTH_SECRET, clear, 'client-secret')
    plant(config, pattern, value)
    leaks.push(clear)
    if (kind === 'sealed') leaks.push(value, ...value.slice('enc:v1:'.length).split('.'))
  })
  return { config, leaks }
}

const event = (detail: Json): AuditEventView => ({
  id: 1,
  type: 'config.changed',
  outcome: 'success',
  actorUserId: null,
  targetUserId: null,
  target: 'config',
  ipAddress: null,
  userAgent: null,
  detail,
  requestId: null,
  createdAt: 0,
})

describe('secret config fields', () => {
  it('are read off the schema: SMTP password, every social provider secret, every generic OAuth provider secret', () => {
    const names = configSecretPatterns().map((p) => p.join('.'))
    expect(names).toContain('mail.smtp.password')
    expect(names).toContain('socialProviders.github.clientSecret')
    expect(names).toContain('genericOAuth.config.[].clientSecret')
    expect(isSecretPath('genericOAuth.config.3.clientSecret')).toBe(true)
    expect(isSecretPath('genericOAuth.config.3.clientId')).toBe(false)
    // The API-key settings are not secrets (they read "(secret) → (secret)" when a key's name decided).
    expect(isSecretPath('apiKey.defaultKeyLength')).toBe(false)
    expect(holdsSecret('genericOAuth.config')).toBe(true)
    expect(holdsSecret('socialProviders.github.enabled')).toBe(false)
  })

  it('a field named like a secret is marked as one', () => {
    const leaves: string[] = []
    const walk = (schema: z.ZodType, path: string[]) => {
      const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def
      if (def.type === 'object') for (const [k, v] of Object.entries(def.shape as Json)) walk(v as z.ZodType, [...path, k])
      else if (def.type === 'array') walk(def.element as z.ZodType, [...path, '[]'])
      else if (def.type === 'record') walk(def.valueType as z.ZodType, [...path, '*'])
      else if (def.innerType) walk(def.innerType as z.ZodType, path)
      else leaves.push(path.join('.'))
    }
    walk(configSchema, [])
    const named = leaves.filter((p) =>
      /^(password|pass|secret|clientSecret|privateKey|secretKey|apiSecret|passphrase)$/i.test(p.split('.').at(-1) ?? ''),
    )
    expect(named.length).toBeGreaterThan(0)
    expect(named.filter((p) => !isSecretPath(p))).toEqual([])
  })

  it('a marked field nested anywhere is found (object, record, array, optional, default)', async () => {
    const { z } = await import('zod')
    const { secret } = await import('../../server/config/secret.js')
    const schema = z.object({
      a: z.object({ s: secret(z.string()).optional() }).prefault({}),
      r: z.record(z.string(), z.object({ s: secret(z.string()) })),
      l: z.array(z.object({ s: secret(z.string()).default('x') })).default([]),
    })
    expect(secretPatternsOf(schema).map((p) => p.join('.'))).toEqual(['a.s', 'l.[].s', 'r.*.s'])
  })

  for (const [from, to] of [
    ['none', 'plain'],
    ['plain', 'sealed'],
    ['sealed', 'none'],
    ['none', 'sealed'],
  ] as const) {
    it(`never reach an audit entry, its export or the known file (${from} → ${to})`, () => {
      const none = { config: structuredClone(configSchema.parse({})) as unknown as Json, leaks: [] as string[] }
      const pick = (k: typeof from | typeof to) => (k === 'none' ? none : planted(k))
      const before = pick(from)
      const after = pick(to)
      const leaks = [...before.leaks, ...after.leaks]
      const known = [auditableLeaves(before.config, AUTH_SECRET), auditableLeaves(after.config, AUTH_SECRET)]
      const changes = diffLeaves(known[0] as Json, known[1] as Json)
      // Every secret field changed, and says so without its value.
      const keys = changes.map((c) => c.key)
      expect(keys).toEqual(expect.arrayContaining(['mail.smtp.password', 'socialProviders.github.clientSecret', 'genericOAuth.config']))
      const entry = event({ via: 'start', keys, changes })
      const texts = [JSON.stringify(changes), JSON.stringify(known), toCsv([entry]), JSON.stringify([entry])]
      for (const text of texts) for (const leak of leaks) expect(text).not.toContain(leak)
      expect(changes.find((c) => c.key === 'mail.smtp.password')).toEqual({
        key: 'mail.smtp.password',
        from: from === 'none' ? null : '(secret)',
        to: to === 'none' ? null : '(secret)',
      })
      // The generic provider shows its other fields, the secret as "(secret)".
      const generic = changes.find((c) => c.key === 'genericOAuth.config')
      const shownList = (to === 'none' ? generic?.from : generic?.to) as Json[]
      expect(shownList[0]).toMatchObject({ providerId: 'planted', clientId: 'planted-client', clientSecret: '(secret)' })
    })
  }

  it('never reach the Settings view', () => {
    for (const kind of ['plain', 'sealed'] as const) {
      const { config, leaks } = planted(kind)
      const text = JSON.stringify(withoutSecrets(config))
      for (const leak of leaks) expect(text).not.toContain(leak)
      expect(text).toContain('planted-client')
    }
  })

  it('non-secret values are shown, and a URL shows without its password', () => {
    const before = auditableLeaves(configSchema.parse({}), AUTH_SECRET)
    const after = auditableLeaves(
      configSchema.parse({
        apiKey: { enabled: true, defaultKeyLength: 32 },
        mail: { smtp: { url: 'smtp://me:PW-URL-1@mail.example.com' } },
      }),
      AUTH_SECRET,
    )
    const changes = diffLeaves(before, after)
    expect(changes).toEqual(
      expect.arrayContaining([
        { key: 'apiKey.enabled', from: false, to: true },
        { key: 'apiKey.defaultKeyLength', from: 64, to: 32 },
        { key: 'mail.smtp.url', from: null, to: 'smtp://me:***@mail.example.com' },
      ]),
    )
    expect(JSON.stringify(changes)).not.toContain('PW-URL-1')
  })
})
