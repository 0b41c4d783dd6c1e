import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decryptSecret, encryptSecret, revealSecret } from '../../../server/crypto/encrypt.js'
import { Browser, FakeProvider } from '../../helpers/oauth-fakes.js'
import { and, eq } from 'drizzle-orm'
import { account } from '../../../server/db/schema.js'
import { firstRow } from '../../../server/db/storage.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { openSealed } from '../../helpers/signatures.js'

const SECRET = 'test-secret-0123456789-abcdefghijkl'

describe('encryption at rest (AES-256-GCM, key from the auth secret by HKDF)', () => {
  it('round-trips, uses a fresh IV each time, and refuses tampering, another purpose or another secret', async () => {
    const a = encryptSecret(SECRET, 'gho_token', 'oauth-token')
    const b = encryptSecret(SECRET, 'gho_token', 'oauth-token')
    expect(a).toMatch(/^enc:v1:[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
    expect(a).not.toBe(b)
    expect(a).not.toContain('gho_token')
    expect(decryptSecret(SECRET, a, 'oauth-token')).toBe('gho_token')
    // Opened by an independent implementation (WebCrypto, HKDF and AES-GCM from the documented parameters).
    expect(await openSealed(SECRET, a, 'oauth-token')).toBe('gho_token')
    expect(await openSealed(SECRET, a, 'client-secret')).toBeNull()
    expect(await openSealed('another-secret-0123456789-abcdefgh', a, 'oauth-token')).toBeNull()
    expect(decryptSecret(SECRET, a, 'client-secret')).toBeNull()
    expect(decryptSecret('another-secret-0123456789-abcdefgh', a, 'oauth-token')).toBeNull()
    const body = a.split('.')[1] as string
    const flipped = `${a.slice(0, a.length - body.length)}${body[0] === 'A' ? 'B' : 'A'}${body.slice(1)}`
    expect(decryptSecret(SECRET, flipped, 'oauth-token')).toBeNull()
    expect(revealSecret(SECRET, 'plain-legacy-value', 'oauth-token')).toBe('plain-legacy-value')
    expect(revealSecret(SECRET, null)).toBeNull()
  })
})

describe('a sealed client secret in the configuration', () => {
  let server: TestServer
  const fake = new FakeProvider()
  beforeAll(async () => {
    await fake.start()
    server = await startTestServer({ secret: SECRET })
    server.gatehouse.config.update({
      socialProviders: {
        spotify: {
          clientId: 'sp-id',
          clientSecret: encryptSecret(SECRET, 'sp-secret-in-clear', 'client-secret'),
          endpoints: { authorization: `${fake.url}/authorize`, token: `${fake.url}/token`, userInfo: `${fake.url}/me` },
        },
      },
    })
  })
  afterAll(async () => {
    await server?.close()
    await fake.close()
  })

  it('is opened only for the token request and is never written to the authorization URL', async () => {
    fake.on('POST', '/token', (req) =>
      req.form.get('client_secret') === 'sp-secret-in-clear'
        ? { json: { access_token: 'at', token_type: 'Bearer', expires_in: 3600 } }
        : { status: 401, json: { error: 'invalid_client' } },
    )
    fake.on('GET', '/me', () => ({ json: { id: 'sp-1', display_name: 'Sealed', email: 'sealed@example.com', images: [] } }))
    const browser = new Browser()
    const start = await browser.postJson(`${server.base}/sign-in/social`, { provider: 'spotify', callbackURL: '/ok' }, server.origin)
    const { url } = (await start.json()) as { url: string }
    expect(url).not.toContain('sp-secret')
    const state = new URL(url).searchParams.get('state')
    const cb = await browser.request(`${server.base}/callback/spotify?code=c&state=${state}`)
    expect(cb.headers.get('location')).toBe('/ok')
    expect(JSON.stringify(server.gatehouse.config.get().socialProviders.spotify)).not.toContain('sp-secret-in-clear')
    // The provider token is stored sealed for its purpose, and opens with the independent code.
    const stored = await firstRow(
      server.gatehouse.ctx.db
        .select({ accessToken: account.accessToken })
        .from(account)
        .where(and(eq(account.providerId, 'spotify'), eq(account.accountId, 'sp-1'))),
    )
    if (!stored?.accessToken) throw new Error('no stored spotify access token')
    expect(stored.accessToken).toMatch(/^enc:v1:/)
    expect(await openSealed(SECRET, stored.accessToken, 'oauth-token')).toBe('at')
  })
})
