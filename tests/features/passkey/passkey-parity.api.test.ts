import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { passkey } from '@better-auth/passkey'
import Database from 'better-sqlite3'
import { betterAuth } from 'better-auth'
import { getMigrations } from 'better-auth/db/migration'
import { toNodeHandler } from 'better-auth/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient, uniqueEmail } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/** Passkey wire parity with a real better-auth 1.7.25 + @better-auth/passkey on loopback (the parts a test can drive without an authenticator). */

let gatehouse: TestServer
let oracle: Server
let oracleBase: string

beforeAll(async () => {
  gatehouse = await startTestServer({ config: { passkey: { enabled: true, rpName: 'Parity' } } })
  oracle = createServer()
  await new Promise<void>((resolve) => oracle.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(oracle.address() as AddressInfo).port}`
  const options = {
    baseURL: origin,
    secret: 'oracle-secret-0123456789-abcdefghijkl',
    database: new Database(':memory:'),
    emailAndPassword: { enabled: true },
    rateLimit: { enabled: false },
    plugins: [passkey({ rpName: 'Parity' })],
  }
  const { runMigrations } = await getMigrations(options)
  await runMigrations()
  oracle.on('request', toNodeHandler(betterAuth(options)))
  oracleBase = `${origin}/api/auth`
}, 60_000)

afterAll(async () => {
  await new Promise((r) => oracle.close(r))
  await gatehouse.close()
})

const cookieShape = (cookies: string[]) => cookies.map((c) => c.replace(/=[^;]*/, '=<value>')).filter((c) => c.includes('passkey'))

async function scenario(base: string) {
  const out: Record<string, unknown> = {}
  const anon = new HttpClient(base)
  const auth = await anon.get<Record<string, unknown>>('/passkey/generate-authenticate-options')
  out.authenticate = {
    status: auth.status,
    keys: Object.keys(auth.body).sort(),
    userVerification: auth.body.userVerification,
    cookies: cookieShape(auth.cookies),
  }
  out.noSessionRegister = (await anon.get('/passkey/generate-register-options')).status
  out.unknownCredential = await anon
    .post('/passkey/verify-authentication', { response: { id: 'nope', response: {} } })
    .then((r) => ({ status: r.status, body: r.body }))
  out.noChallenge = await new HttpClient(base)
    .post('/passkey/verify-authentication', { response: { id: 'nope', response: {} } })
    .then((r) => ({ status: r.status, body: r.body }))

  const user = new HttpClient(base)
  await user.post('/sign-up/email', { name: 'Parity', email: uniqueEmail('pkparity'), password: 'correct horse battery' })
  const reg = await user.get<Record<string, unknown>>('/passkey/generate-register-options?name=Laptop')
  out.register = {
    status: reg.status,
    keys: Object.keys(reg.body).sort(),
    rp: (reg.body.rp as { name: string }).name,
    user: (reg.body.user as { name: string }).name,
    attestation: reg.body.attestation,
    authenticatorSelection: reg.body.authenticatorSelection,
    pubKeyCredParams: reg.body.pubKeyCredParams,
    cookies: cookieShape(reg.cookies),
  }
  out.badRegistration = await user
    .post('/passkey/verify-registration', { response: { id: 'x', rawId: 'x', type: 'public-key', response: {} } })
    .then((r) => ({ status: r.status, body: r.body }))
  out.list = (await user.get('/passkey/list-user-passkeys')).body
  out.deleteUnknown = await user.post('/passkey/delete-passkey', { id: 'nope' }).then((r) => ({ status: r.status, body: r.body }))
  out.updateUnknown = await user
    .post('/passkey/update-passkey', { id: 'nope', name: 'x' })
    .then((r) => ({ status: r.status, body: r.body }))
  return out
}

describe('passkey wire parity with @better-auth/passkey', () => {
  it('answers the same scenario the same way', async () => {
    const ours = await scenario(gatehouse.base)
    const theirs = await scenario(oracleBase)
    expect(ours).toEqual(theirs)
  }, 60_000)
})
