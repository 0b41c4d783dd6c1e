import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../../helpers/engines.js'
import { HttpClient } from '../../helpers/http.js'
import { cookieOf, type Instance, MULTI_PASSWORD, PUBLIC_ORIGIN, startInstance } from '../../helpers/instances.js'
import { ASSERTION, authnRequest, first, formFields, makeSp, redirectQuery, type TestSp, verifiedResponse } from './sp.js'

/**
 * The SAML identity provider on two instances of one PostgreSQL database behind a round-robin proxy
 * (a small node:http one here): a request received by one instance is finished by the other, so
 * everything between the two (the request, the key, the replay check) is in the database.
 */

const noPostgres = postgresUnavailable()
warnSkipped('tests/features/saml/multi.test.ts (two instances on PostgreSQL)', noPostgres)

let postgres: PostgresServer
let a: Instance
let b: Instance
let proxy: Server
let proxyBase: string
const served: string[] = []
let sp: TestSp

/** Round robin: each request goes to the next instance, as received (Host kept). */
function startProxy(targets: Instance[]): Promise<Server> {
  let next = 0
  const server = createServer((req, res) => {
    const target = targets[next++ % targets.length] as Instance
    served.push(`${target.name} ${req.method} ${req.url?.split('?')[0]}`)
    const url = new URL(target.base)
    const upstream = request({ host: url.hostname, port: url.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => {
      res.statusCode = 502
      res.end()
    })
    req.pipe(upstream)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

beforeAll(async () => {
  if (noPostgres) return
  postgres = await startPostgres()
  const databaseUrl = await postgres.createDatabase('saml')
  const config = { saml: { enabled: true }, rateLimit: { enabled: false } }
  a = await startInstance('saml-a', { databaseUrl, config })
  b = await startInstance('saml-b', { databaseUrl, config })
  proxy = await startProxy([a, b])
  proxyBase = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/auth`
  sp = makeSp('multi-sp')
  // Registered through the control panel of one instance.
  const created = await a.panelCall<{ entityId: string }>('saml.createServiceProvider', { metadataXml: sp.metadata(), name: 'Multi' })
  expect(created.status).toBe(200)
  expect(created.body.entityId).toBe(sp.entityId)
}, 120_000)

afterAll(async () => {
  proxy?.close()
  await a?.stop()
  await b?.stop()
  await postgres?.stop()
})

/** A path of the public URL (http://gatehouse.test/…), through the proxy. */
const viaProxy = (location: string): string => location.replace(`${PUBLIC_ORIGIN}/api/auth`, '')

describe.skipIf(noPostgres)('SAML on two instances behind a round-robin proxy', () => {
  it('one key for both; a request received by one instance is answered by the other; its replay is refused by either', async () => {
    const client = new HttpClient(proxyBase, { origin: PUBLIC_ORIGIN })
    const metadata = await Promise.all([client.get('/saml/metadata'), client.get('/saml/metadata')])
    expect(metadata.map((m) => m.status)).toEqual([200, 200])
    expect(metadata[0]?.text).toBe(metadata[1]?.text)
    const cert = /<ds:X509Certificate>([^<]+)</.exec(metadata[0]?.text ?? '')?.[1] as string

    const email = `multi-${Date.now()}@example.com`
    const signedUp = await client.post('/sign-up/email', { email, password: MULTI_PASSWORD, name: 'Multi Person' })
    expect(signedUp.status).toBe(200)
    expect((await a.panelCall('users.verifyEmail', { userId: (signedUp.body as { user: { id: string } }).user.id })).status).toBe(200)
    const cookie = cookieOf(signedUp)
    const person = new HttpClient(proxyBase, { origin: PUBLIC_ORIGIN, headers: { cookie } })

    const idp = { sso: `${PUBLIC_ORIGIN}/api/auth/saml/sso` }
    const { id, xml } = authnRequest(sp, idp)
    const query = redirectQuery(xml, sp.privateKeyPem)
    served.length = 0
    const received = await person.get(`/saml/sso?${query}`)
    expect(received.status).toBe(303)
    const answered = await person.get(viaProxy(received.headers.get('location') as string))
    expect(answered.status).toBe(200)
    // Received by one instance, finished by the other.
    expect(served).toHaveLength(2)
    expect(new Set(served.map((s) => s.split(' ')[0])).size).toBe(2)
    const form = formFields(answered.text)
    expect(form.action).toBe(sp.acs)
    const root = verifiedResponse(form.fields.SAMLResponse as string, cert)
    expect(root.getAttribute('InResponseTo')).toBe(id)
    expect(first(root, ASSERTION, 'NameID').textContent).toBe(email)

    // The same request again, on each instance: a replay.
    for (let i = 0; i < 2; i++) {
      const again = await person.get(`/saml/sso?${query}`)
      expect(again.status).toBe(303)
      expect(new URL(again.headers.get('location') as string).searchParams.get('error')).toBe('saml_replayed_request')
    }
  }, 60_000)
})
