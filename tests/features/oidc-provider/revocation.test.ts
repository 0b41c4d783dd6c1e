import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { createClient } from '../../../server/features/oidc-provider/clients.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { CALLBACK, discover, PASSWORD, RP, signedInJar, signIn } from './rp.js'

/**
 * Token revocation (RFC 7009) by whom: a client revokes its own tokens; another client's token is
 * refused to a confidential client (400 invalid_request) and left alone for a public one (200).
 * Gatehouse states that rule itself: oidc-provider's default policy printed an
 * "oidc-provider NOTICE" on stdout, past Gatehouse's logger, at the first revocation (which
 * mod_auth_openidc makes at every sign-out).
 */

let server: TestServer
const info = vi.spyOn(console, 'info')

beforeAll(async () => {
  server = await startTestServer({ config: { oidcProvider: { enabled: true } } })
})
afterAll(async () => {
  info.mockRestore()
  await server?.close()
})

async function client(name: string, isPublic = false) {
  const created = await createClient(
    server.gatehouse.ctx,
    { name, redirectUris: [CALLBACK], postLogoutRedirectUris: [`${RP}/signed-out`], skipConsent: true, public: isPublic },
    { via: 'cli' },
  )
  return { clientId: created.client.clientId, secret: created.clientSecret }
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`

async function post(path: string, auth: { clientId: string; secret: string | null }, body: Record<string, string>) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  const form = new URLSearchParams(body)
  if (auth.secret) headers.authorization = basic(auth.clientId, auth.secret)
  else form.set('client_id', auth.clientId)
  const res = await fetch(`${server.base}${path}`, { method: 'POST', headers, body: form })
  const text = await res.text()
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }
}

it('a client revokes its own tokens only; no oidc-provider notice is printed', async () => {
  const [own, other, publicOne] = await Promise.all([client('Owner'), client('Other'), client('Mobile', true)])
  const person = await verifiedSignUp(server, { password: PASSWORD })
  const config = await discover(server, own.clientId, own.secret as string)
  const tokens = await signIn(server, config, await signedInJar(server, person))
  const refresh = tokens.refresh_token as string
  const access = tokens.access_token
  const active = async (token: string) => (await post('/oauth2/introspect', own, { token })).body.active

  // Another confidential client: refused, and the token still works.
  const refused = await post('/oauth2/revoke', other, { token: refresh, token_type_hint: 'refresh_token' })
  expect(refused).toEqual({
    status: 400,
    body: { error: 'invalid_request', error_description: 'client is not authorized to revoke the presented token' },
  })
  expect(await active(refresh)).toBe(true)
  // A public client: answered 200 (RFC 7009 §2.2 for a token it cannot revoke), the token left alone.
  expect(await post('/oauth2/revoke', publicOne, { token: access })).toEqual({ status: 200, body: {} })
  expect(await active(access)).toBe(true)
  // Its own client: revoked.
  expect(await post('/oauth2/revoke', own, { token: refresh, token_type_hint: 'refresh_token' })).toEqual({ status: 200, body: {} })
  expect(await active(refresh)).toBe(false)
  expect(await post('/oauth2/revoke', own, { token: access })).toEqual({ status: 200, body: {} })
  expect(await active(access)).toBe(false)

  expect(info.mock.calls.flat().filter((line) => String(line).includes('oidc-provider NOTICE'))).toEqual([])
}, 60_000)
