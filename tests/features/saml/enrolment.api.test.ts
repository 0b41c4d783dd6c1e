import type { Element } from '@xmldom/xmldom'
import { type TOTP, URI } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setRole, systemActor } from '../../../server/features/admin/index.js'
import { createServiceProvider } from '../../../server/features/saml/service-providers.js'
import { HttpClient } from '../../helpers/http.js'
import { serverLog, startTestServer, type TestServer } from '../../helpers/server.js'
import {
  ASSERTION,
  authnRequest,
  first,
  formFields,
  makeSp,
  PROTOCOL,
  redirectQuery,
  type TestSp,
  useClock,
  verifiedPerson,
  verifiedResponse,
} from './sp.js'

/**
 * Issue 49 §10 at the SAML face: a session whose second-factor enrolment is overdue
 * (`twoFactor.enforcement`, grace over) reaching the IdP is sent to the hosted enrolment step with
 * the continue URL of its pending AuthnRequest as returnTo (not to the error page); once enrolled,
 * that URL answers the SP with its assertion. IsPassive allows no page: NoPassive. On SQLite and
 * PostgreSQL (GATEHOUSE_TEST_ENGINE).
 */

let server: TestServer
let sp: TestSp
let idp: { sso: string }

beforeAll(async () => {
  server = await startTestServer({
    // A grace of 0: over at the first sign-in, which still opens a session (to enrol with).
    config: { saml: { enabled: true }, twoFactor: { enabled: true, enforcement: { roles: ['admin'], gracePeriod: 0 } } },
  })
  idp = { sso: `${server.base}/saml/sso` }
  useClock(() => server.clock.now())
  sp = makeSp('enrol-sp')
  await createServiceProvider(
    server.gatehouse.ctx,
    { metadataXml: sp.metadata({ authnRequestsSigned: false }), name: 'Enrol SP' },
    { via: 'cli' },
  )
}, 120_000)
afterAll(() => server?.close())

/** A verified administrator (an enforced role) signed in afresh: the grace starts and, at 0, is over. */
async function overdue(): Promise<{ client: HttpClient; password: string }> {
  const person = await verifiedPerson(server)
  await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: person.user.id, role: 'admin' }, null)
  const client = new HttpClient(server.base)
  const answer = await client.post<{ twoFactorEnrollment?: { overdue?: boolean } }>('/sign-in/email', {
    email: person.email,
    password: person.password,
  })
  expect(answer.status).toBe(200)
  expect(answer.body.twoFactorEnrollment?.overdue).toBe(true)
  return { client, password: person.password }
}

/** The AuthnRequest over HTTP-Redirect, taken: the continue URL (path under the base). */
async function pending(client: HttpClient, options: { isPassive?: boolean } = {}): Promise<{ id: string; cont: string }> {
  const { id, xml } = authnRequest(sp, idp)
  const sent = options.isPassive ? xml.replace(' Version="2.0"', ' IsPassive="true" Version="2.0"') : xml
  const res = await client.get(`/saml/sso?${redirectQuery(sent, null, 'relay-1')}`)
  expect(res.status).toBe(303)
  const location = res.headers.get('location') as string
  expect(location).toMatch(/\/saml\/continue\//)
  return { id, cont: location }
}

const idpCert = async (): Promise<string> =>
  /<ds:X509Certificate>([^<]+)</.exec(await (await fetch(`${server.base}/saml/metadata`)).text())?.[1] as string

describe('SAML: an overdue second-factor enrolment', () => {
  it('goes to the hosted enrolment step with the pending request as returnTo; enrolled, the same request gets its assertion', async () => {
    const { client, password } = await overdue()
    const { id, cont } = await pending(client)
    const refused = await client.get(cont.slice(server.base.length))
    expect(refused.status).toBe(303)
    expect(refused.headers.get('location')).toBe(`${server.base}/ui/account/two-factor?enrol=1&returnTo=${encodeURIComponent(cont)}`)
    // Still overdue: the same again (the request stays pending, no assertion).
    const again = await client.get(cont.slice(server.base.length))
    expect(again.headers.get('location')).toBe(refused.headers.get('location'))

    // Enrolled (a TOTP confirmed): the continue URL answers the SP.
    const enable = await client.post<{ totpURI: string }>('/two-factor/enable', { password })
    expect(enable.status).toBe(200)
    const totp = URI.parse(enable.body.totpURI) as TOTP
    expect((await client.post('/two-factor/verify-totp', { code: totp.generate({ timestamp: server.clock.now() }) })).status).toBe(200)
    const answer = await client.get(cont.slice(server.base.length))
    expect(answer.status).toBe(200)
    const form = formFields(answer.text)
    expect(form.action).toBe(sp.acs)
    expect(form.fields.RelayState).toBe('relay-1')
    const root = verifiedResponse(form.fields.SAMLResponse as string, await idpCert())
    expect(root.getAttribute('InResponseTo')).toBe(id)
    expect(first(root, ASSERTION, 'Assertion')).toBeTruthy()
  }, 60_000)

  it('IsPassive: no page, the SP hears NoPassive', async () => {
    const { client } = await overdue()
    const { id, cont } = await pending(client, { isPassive: true })
    const answer = await client.get(cont.slice(server.base.length))
    expect(answer.status).toBe(200)
    const form = formFields(answer.text)
    expect(form.action).toBe(sp.acs)
    const { DOMParser } = await import('@xmldom/xmldom')
    const xml = Buffer.from(form.fields.SAMLResponse as string, 'base64').toString('utf8')
    const root = new DOMParser().parseFromString(xml, 'text/xml').documentElement as unknown as Element
    expect(root.localName).toBe('Response')
    expect(root.getAttribute('InResponseTo')).toBe(id)
    expect(root.getElementsByTagNameNS(ASSERTION, 'Assertion').length).toBe(0)
    const codes = Array.from(root.getElementsByTagNameNS(PROTOCOL, 'StatusCode')).map((c) => c.getAttribute('Value'))
    expect(codes).toEqual(['urn:oasis:names:tc:SAML:2.0:status:Responder', 'urn:oasis:names:tc:SAML:2.0:status:NoPassive'])
  }, 60_000)

  it('with the hosted pages off there is nowhere to enrol: the refusal stands (NOT_ADMITTED)', async () => {
    serverLog.allowWarning(/SAML request refused: NOT_ADMITTED/)
    const { client } = await overdue()
    const { cont } = await pending(client)
    server.gatehouse.config.update({ hostedPages: { enabled: false } })
    try {
      const refused = await client.get(cont.slice(server.base.length))
      expect(refused.status).toBe(303)
      const location = new URL(refused.headers.get('location') as string)
      expect(location.searchParams.get('error')).toBe('saml_not_admitted')
    } finally {
      server.gatehouse.config.update({ hostedPages: { enabled: true } })
    }
  }, 60_000)
})
