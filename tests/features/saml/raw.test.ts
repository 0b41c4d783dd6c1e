import { X509Certificate } from 'node:crypto'
import { deflateRawSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServiceProvider } from '../../../server/features/saml/service-providers.js'
import { HttpClient, signUp } from '../../helpers/http.js'
import { markVerified, verifiedSignUp } from '../../helpers/members.js'
import { serverLog, startTestServer, type TestServer } from '../../helpers/server.js'
import {
  ASSERTION,
  attributesOf,
  authnRequest,
  first,
  formFields,
  logoutRequestXml,
  makeSp,
  PROTOCOL,
  redirectQuery,
  signXml,
  type TestSp,
  useClock,
  verifiedResponse,
} from './sp.js'

/**
 * The SAML identity provider over raw HTTP: metadata, the SSO endpoint's checks (signature, audience,
 * destination, ACS, replay, unknown SP), the signed Response, single logout. Refusals land on the
 * hosted error page (303), never a 5xx.
 */

let server: TestServer
let sp: TestSp
let unsignedSp: TestSp
let idp: { sso: string; slo: string; metadata: string }
let idpCert: string

const BY = { via: 'cli' as const }

beforeAll(async () => {
  server = await startTestServer({ config: { saml: { enabled: true } } })
  const base = server.base
  idp = { sso: `${base}/saml/sso`, slo: `${base}/saml/slo`, metadata: `${base}/saml/metadata` }
  useClock(() => server.clock.now())
  sp = makeSp('signed-sp')
  unsignedSp = makeSp('plain-sp')
  await createServiceProvider(
    server.gatehouse.ctx,
    { metadataXml: sp.metadata({ extraAcs: ['https://signed-sp.example/acs2'] }), name: 'Signed SP' },
    BY,
  )
  await createServiceProvider(
    server.gatehouse.ctx,
    { metadataXml: unsignedSp.metadata({ authnRequestsSigned: false }), name: 'Plain SP', nameIdFormat: 'persistent-shared' },
    BY,
  )
})
afterAll(() => server?.close())

function refusedWith(res: { status: number; headers: Headers }, reason: string): void {
  expect(res.status).toBe(303)
  const location = new URL(res.headers.get('location') ?? '')
  expect(location.pathname).toBe(new URL(`${server.base}/ui/error`).pathname)
  expect(location.searchParams.get('error')).toBe(`saml_${reason.toLowerCase()}`)
}

async function get(client: HttpClient, url: string) {
  return client.get(url.slice(server.base.length))
}

describe('metadata', () => {
  it('publishes the entityID, a signing certificate, SSO (Redirect, POST), SLO and the NameID formats', async () => {
    const res = await fetch(idp.metadata)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('samlmetadata+xml')
    const xml = await res.text()
    expect(xml).toContain(`entityID="${idp.metadata}"`)
    expect(xml).toContain(`<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${idp.sso}"/>`)
    expect(xml).toContain(`<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${idp.sso}"/>`)
    expect(xml).toContain(`Location="${idp.slo}"`)
    expect(xml).toContain('urn:oasis:names:tc:SAML:2.0:nameid-format:persistent')
    const certs = [...xml.matchAll(/<ds:X509Certificate>([^<]+)</g)].map((m) => m[1] as string)
    expect(certs).toHaveLength(1)
    idpCert = certs[0] as string
    const x = new X509Certificate(Buffer.from(idpCert, 'base64'))
    expect(x.verify(x.publicKey)).toBe(true)
    // The same key on the next request (stored, not made again).
    expect(await (await fetch(idp.metadata)).text()).toBe(xml)
  })
})

describe('SP-initiated sign-in', () => {
  it('Redirect binding, signed: sign-in page first, then a signed Response with the contract fields', async () => {
    const user = await verifiedSignUp(server, { name: 'Ada Lovelace' })
    const { id, xml } = authnRequest(sp, idp)
    const anonymous = new HttpClient(server.base)
    const first303 = await get(anonymous, `${idp.sso}?${redirectQuery(xml, sp.privateKeyPem, 'relay-1')}`)
    expect(first303.status).toBe(303)
    const cont = first303.headers.get('location') as string
    expect(cont).toMatch(/\/saml\/continue\//)
    const toSignIn = await get(anonymous, cont)
    expect(toSignIn.status).toBe(303)
    const signIn = new URL(toSignIn.headers.get('location') as string)
    expect(signIn.pathname).toMatch(/\/ui\/sign-in$/)
    expect(signIn.searchParams.get('returnTo')).toBe(cont)

    const now = server.clock.now()
    const answer = await get(user.client, cont)
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toContain('text/html')
    expect(answer.headers.get('content-security-policy')).toContain('form-action https://signed-sp.example')
    const form = formFields(answer.text)
    expect(form.action).toBe(sp.acs)
    expect(form.fields.RelayState).toBe('relay-1')
    const root = verifiedResponse(form.fields.SAMLResponse as string, idpCert)
    expect(root.getAttribute('Destination')).toBe(sp.acs)
    expect(root.getAttribute('InResponseTo')).toBe(id)
    expect(first(root, PROTOCOL, 'StatusCode').getAttribute('Value')).toBe('urn:oasis:names:tc:SAML:2.0:status:Success')
    expect(first(root, ASSERTION, 'Audience').textContent).toBe(sp.entityId)
    const confirmation = first(root, ASSERTION, 'SubjectConfirmationData')
    expect(confirmation.getAttribute('Recipient')).toBe(sp.acs)
    expect(confirmation.getAttribute('InResponseTo')).toBe(id)
    const notOnOrAfter = Date.parse(first(root, ASSERTION, 'Conditions').getAttribute('NotOnOrAfter') as string)
    expect(notOnOrAfter - now).toBeLessThanOrEqual(5 * 60_000 + 2000)
    expect(notOnOrAfter).toBeGreaterThan(now)
    expect(first(root, ASSERTION, 'AuthnStatement').getAttribute('SessionIndex')).toMatch(/^_/)
    const nameId = first(root, ASSERTION, 'NameID')
    expect(nameId.textContent).toBe(user.email)
    expect(nameId.getAttribute('Format')).toBe('urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress')
    expect(attributesOf(root)).toEqual({ email: [user.email], name: ['Ada Lovelace'], uid: [user.email], groups: ['user'] })
    // The assertion is signed on its own too (RSA-SHA256).
    expect(
      first(first(root, ASSERTION, 'Assertion'), 'http://www.w3.org/2000/09/xmldsig#', 'SignatureMethod').getAttribute('Algorithm'),
    ).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')
    // The continue URL is spent.
    serverLog.allowWarning(/SAML request refused: REQUEST_NOT_FOUND/)
    refusedWith(await get(user.client, cont), 'REQUEST_NOT_FOUND')
  })

  it('POST binding, signed with xml-crypto; an ACS by index from the metadata; persistent-shared NameID (the user id) for an SP that asks for it', async () => {
    const user = await verifiedSignUp(server)
    const { xml } = authnRequest(sp, idp, { acsUrl: 'https://signed-sp.example/acs2' })
    const signed = signXml(xml, sp.privateKeyPem, sp.certificate)
    const res = await user.client.request('POST', '/saml/sso', {
      raw: new URLSearchParams({ SAMLRequest: Buffer.from(signed).toString('base64') }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://signed-sp.example' },
    })
    expect(res.status).toBe(303)
    const answer = await get(user.client, res.headers.get('location') as string)
    expect(answer.status).toBe(200)
    expect(formFields(answer.text).action).toBe('https://signed-sp.example/acs2')

    const plain = authnRequest(unsignedSp, idp)
    const res2 = await get(user.client, `${idp.sso}?${redirectQuery(plain.xml, null)}`)
    const answer2 = await get(user.client, res2.headers.get('location') as string)
    const root = verifiedResponse(formFields(answer2.text).fields.SAMLResponse as string, idpCert)
    expect(first(root, ASSERTION, 'NameID').textContent).toBe(user.user.id)
    expect(first(root, ASSERTION, 'NameID').getAttribute('Format')).toBe('urn:oasis:names:tc:SAML:2.0:nameid-format:persistent')
  })
})

describe('refusals: the hosted error page, audited, never a 5xx', () => {
  const anonymous = () => new HttpClient(server.base)

  it('an unsigned request to an SP whose metadata says AuthnRequestsSigned', async () => {
    serverLog.allowWarning(/SAML request refused: UNSIGNED_REQUEST/)
    refusedWith(await get(anonymous(), `${idp.sso}?${redirectQuery(authnRequest(sp, idp).xml, null)}`), 'UNSIGNED_REQUEST')
    const posted = await anonymous().request('POST', '/saml/sso', {
      raw: new URLSearchParams({ SAMLRequest: Buffer.from(authnRequest(sp, idp).xml).toString('base64') }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    refusedWith(posted, 'UNSIGNED_REQUEST')
  })

  it('a request signed with another key (Redirect and POST), and a tampered signed request', async () => {
    serverLog.allowWarning(/SAML request refused: BAD_SIGNATURE/)
    const other = makeSp('signed-sp')
    refusedWith(await get(anonymous(), `${idp.sso}?${redirectQuery(authnRequest(sp, idp).xml, other.privateKeyPem)}`), 'BAD_SIGNATURE')
    const wrong = signXml(authnRequest(sp, idp).xml, other.privateKeyPem, other.certificate)
    const posted = await anonymous().request('POST', '/saml/sso', {
      raw: new URLSearchParams({ SAMLRequest: Buffer.from(wrong).toString('base64') }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    refusedWith(posted, 'BAD_SIGNATURE')
    // Signed, then the ACS changed: the digest no longer matches.
    const good = signXml(authnRequest(sp, idp).xml, sp.privateKeyPem, sp.certificate).replace(sp.acs, 'https://evil.example/acs')
    const tampered = await anonymous().request('POST', '/saml/sso', {
      raw: new URLSearchParams({ SAMLRequest: Buffer.from(good).toString('base64') }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    refusedWith(tampered, 'BAD_SIGNATURE')
    // Redirect binding: RelayState changed after signing.
    const q = redirectQuery(authnRequest(sp, idp).xml, sp.privateKeyPem, 'a').replace('RelayState=a', 'RelayState=b')
    refusedWith(await get(anonymous(), `${idp.sso}?${q}`), 'BAD_SIGNATURE')
  })

  it('signature wrapping: what is read is what the signature covers', async () => {
    serverLog.allowWarning(/SAML request refused: (UNSIGNED_REQUEST|BAD_SIGNATURE)/)
    const post = (xml: string, client = anonymous()) =>
      client.request('POST', '/saml/sso', {
        raw: new URLSearchParams({ SAMLRequest: Buffer.from(xml).toString('base64') }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
    // An unsigned request carrying a signed one inside: the outer one is unsigned.
    const signed = signXml(authnRequest(sp, idp).xml, sp.privateKeyPem, sp.certificate)
    const evil = authnRequest(sp, idp, { acsUrl: 'https://evil.example/acs' }).xml.replace(
      '</samlp:AuthnRequest>',
      `<samlp:Extensions>${signed.replace(/^<\?xml[^>]*>/, '')}</samlp:Extensions></samlp:AuthnRequest>`,
    )
    refusedWith(await post(evil), 'UNSIGNED_REQUEST')
    // The signature moved to an evil root with the same ID, the signed original hidden inside: either
    // refused, or answered from the signed original (its ACS), never the evil one's.
    const inner = authnRequest(sp, idp)
    const innerSigned = signXml(inner.xml, sp.privateKeyPem, sp.certificate).replace(/^<\?xml[^>]*>/, '')
    const signature = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(innerSigned)?.[0] as string
    const original = innerSigned.replace(signature, '')
    const wrapped = authnRequest(sp, idp, { id: inner.id, acsUrl: 'https://evil.example/acs' }).xml.replace(
      '</saml:Issuer>',
      `</saml:Issuer>${signature}<samlp:Extensions>${original}</samlp:Extensions>`,
    )
    const user = await verifiedSignUp(server)
    const res = await post(wrapped, user.client)
    expect(res.status).toBe(303)
    const location = res.headers.get('location') as string
    if (location.includes('/ui/error'))
      expect(new URL(location).searchParams.get('error')).toMatch(/^saml_(bad_signature|replayed_request)$/)
    else expect(formFields((await get(user.client, location)).text).action).toBe(sp.acs)
  })

  it('an ACS URL not in the metadata, a wrong destination, an old request, an unknown SP', async () => {
    serverLog.allowWarning(/SAML request refused: (ACS_NOT_IN_METADATA|DESTINATION_MISMATCH|REQUEST_EXPIRED|UNKNOWN_SP)/)
    const send = (xml: string) => get(anonymous(), `${idp.sso}?${redirectQuery(xml, sp.privateKeyPem)}`)
    refusedWith(await send(authnRequest(sp, idp, { acsUrl: 'https://evil.example/acs' }).xml), 'ACS_NOT_IN_METADATA')
    refusedWith(await send(authnRequest(sp, idp, { destination: 'https://other-idp.example/sso' }).xml), 'DESTINATION_MISMATCH')
    refusedWith(await send(authnRequest(sp, idp, { issueInstant: new Date(server.clock.now() - 3600_000) }).xml), 'REQUEST_EXPIRED')
    refusedWith(await send(authnRequest(sp, idp, { issuer: 'https://unknown.example/metadata' }).xml), 'UNKNOWN_SP')
  })

  it('a replayed request ID', async () => {
    serverLog.allowWarning(/SAML request refused: REPLAYED_REQUEST/)
    const { xml } = authnRequest(sp, idp)
    const q = redirectQuery(xml, sp.privateKeyPem)
    expect((await get(anonymous(), `${idp.sso}?${q}`)).status).toBe(303)
    refusedWith(await get(anonymous(), `${idp.sso}?${q}`), 'REPLAYED_REQUEST')
  })

  it('a document type declaration (entity expansion) is refused before parsing', async () => {
    serverLog.allowWarning(/SAML request refused: XML_DTD_REFUSED/)
    const bomb = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>${authnRequest(unsignedSp, idp).xml.replace('AllowCreate="true"/>', 'AllowCreate="true"/><x>&lol2;</x>')}`
    refusedWith(await get(anonymous(), `${idp.sso}?${redirectQuery(bomb, null)}`), 'XML_DTD_REFUSED')
  })

  it('the refusal is audited', async () => {
    const { auditEvent } = await import('../../../server/db/schema.js')
    const rows = await server.gatehouse.ctx.db.select().from(auditEvent)
    const refused = rows.filter((e) => e.type === 'saml.refused')
    expect(refused.length).toBeGreaterThan(5)
    expect(refused.every((e) => e.outcome === 'failure')).toBe(true)
    expect(refused.map((e) => (e.detail as { reason: string }).reason)).toEqual(
      expect.arrayContaining(['UNSIGNED_REQUEST', 'BAD_SIGNATURE', 'REPLAYED_REQUEST']),
    )
  })
})

describe('single logout', () => {
  it('an SP-initiated LogoutRequest ends the session and is answered with a signed LogoutResponse', async () => {
    const user = await verifiedSignUp(server)
    const { xml } = authnRequest(sp, idp)
    const res = await get(user.client, `${idp.sso}?${redirectQuery(xml, sp.privateKeyPem)}`)
    const answer = await get(user.client, res.headers.get('location') as string)
    const root = verifiedResponse(formFields(answer.text).fields.SAMLResponse as string, idpCert)
    const sessionIndex = first(root, ASSERTION, 'AuthnStatement').getAttribute('SessionIndex') as string
    expect((await user.client.get('/get-session')).body).not.toBeNull()

    const logout = logoutRequestXml(sp, idp, user.email, sessionIndex)
    const out = await get(user.client, `${idp.slo}?${redirectQuery(logout, sp.privateKeyPem, 'back')}`)
    expect(out.status).toBe(303)
    const to = new URL(out.headers.get('location') as string)
    expect(`${to.origin}${to.pathname}`).toBe(sp.slo)
    expect(to.searchParams.get('RelayState')).toBe('back')
    expect(to.searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')
    const { inflateRawSync } = await import('node:zlib')
    const response = inflateRawSync(Buffer.from(to.searchParams.get('SAMLResponse') as string, 'base64')).toString()
    expect(response).toContain('LogoutResponse')
    expect(response).toContain('urn:oasis:names:tc:SAML:2.0:status:Success')
    // The query signature verifies with the IdP certificate.
    const raw = to.search.slice(1)
    const signed = raw.slice(0, raw.indexOf('&Signature='))
    const { createVerify } = await import('node:crypto')
    const pem = `-----BEGIN CERTIFICATE-----\n${idpCert.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`
    expect(
      createVerify('RSA-SHA256')
        .update(signed)
        .verify(pem, Buffer.from(to.searchParams.get('Signature') as string, 'base64')),
    ).toBe(true)
    // The Gatehouse session is over.
    const fresh = new HttpClient(server.base)
    fresh.jar.cookies.set('better-auth.session_token', encodeURIComponent(user.client.jar.get('better-auth.session_token') ?? ''))
    expect((await user.client.get('/get-session')).body).toBeNull()
  })

  it('an unsigned LogoutRequest is refused', async () => {
    serverLog.allowWarning(/SAML request refused: UNSIGNED_REQUEST/)
    const logout = logoutRequestXml(sp, idp, 'x@example.com', '_x')
    refusedWith(await get(new HttpClient(server.base), `${idp.slo}?${redirectQuery(logout, null)}`), 'UNSIGNED_REQUEST')
  })
})

describe('HTTP-Redirect: the message read is the one the signature covers', () => {
  it('a second SAMLRequest/RelayState under a percent-encoded parameter name is refused, not read unsigned', async () => {
    serverLog.allowWarning(/SAML request refused: (MALFORMED_REQUEST|BAD_SIGNATURE)/)
    const user = await verifiedSignUp(server)
    // A genuine signed request (anyone can get one from the SP), and a forged unsigned one put first
    // under `SAML%52equest`: URLSearchParams decodes the name, the signature check used the raw one.
    const signed = redirectQuery(authnRequest(sp, idp).xml, sp.privateKeyPem, 'relay')
    const forged = authnRequest(sp, idp, { acsUrl: 'https://signed-sp.example/acs2' })
    const forgedParam = encodeURIComponent(deflateRawSync(Buffer.from(forged.xml)).toString('base64'))
    const res = await get(user.client, `${idp.sso}?SAML%52equest=${forgedParam}&Relay%53tate=forged&${signed}`)
    refusedWith(res, 'MALFORMED_REQUEST')
    // Duplicated parameters are refused too (which one is signed would be a guess).
    const doubled = await get(user.client, `${idp.sso}?${signed}&SAMLRequest=${forgedParam}`)
    refusedWith(doubled, 'MALFORMED_REQUEST')
  })

  it('a forged LogoutRequest put before a genuine signed one does not end another person’s session', async () => {
    serverLog.allowWarning(/SAML request refused: (MALFORMED_REQUEST|BAD_SIGNATURE)/)
    idpCert ??= /<ds:X509Certificate>([^<]+)</.exec(await (await fetch(idp.metadata)).text())?.[1] as string
    const victim = await verifiedSignUp(server)
    const res = await get(victim.client, `${idp.sso}?${redirectQuery(authnRequest(sp, idp).xml, sp.privateKeyPem)}`)
    const answer = await get(victim.client, res.headers.get('location') as string)
    const root = verifiedResponse(formFields(answer.text).fields.SAMLResponse as string, idpCert)
    const sessionIndex = first(root, ASSERTION, 'AuthnStatement').getAttribute('SessionIndex') as string
    // The attacker's own LogoutRequest, signed by the SP; the forged one names the victim.
    const own = redirectQuery(logoutRequestXml(sp, idp, 'attacker@example.com', '_attacker'), sp.privateKeyPem)
    const forged = encodeURIComponent(deflateRawSync(Buffer.from(logoutRequestXml(sp, idp, victim.email, sessionIndex))).toString('base64'))
    refusedWith(await get(new HttpClient(server.base), `${idp.slo}?SAML%52equest=${forged}&${own}`), 'MALFORMED_REQUEST')
    expect((await victim.client.get('/get-session')).body).not.toBeNull()
  })
})

describe('single logout without SessionIndex', () => {
  it('a signed LogoutRequest naming only the NameID ends the sessions this SP holds for that person (SAML core §3.7.3.2)', async () => {
    idpCert ??= /<ds:X509Certificate>([^<]+)</.exec(await (await fetch(idp.metadata)).text())?.[1] as string
    const user = await verifiedSignUp(server)
    const other = await verifiedSignUp(server)
    for (const who of [user, other]) {
      const res = await get(who.client, `${idp.sso}?${redirectQuery(authnRequest(sp, idp).xml, sp.privateKeyPem)}`)
      expect((await get(who.client, res.headers.get('location') as string)).status).toBe(200)
    }
    const logout = logoutRequestXml(sp, idp, user.email, 'unused').replace(/<samlp:SessionIndex>[^<]*<\/samlp:SessionIndex>/, '')
    expect(logout).not.toContain('SessionIndex')
    const out = await get(new HttpClient(server.base), `${idp.slo}?${redirectQuery(logout, sp.privateKeyPem)}`)
    expect(out.status).toBe(303)
    expect(new URL(out.headers.get('location') as string).pathname).toBe('/slo')
    expect((await user.client.get('/get-session')).body).toBeNull()
    // Someone else's session at the same SP is not touched.
    expect((await other.client.get('/get-session')).body).not.toBeNull()
  })
})

describe('HTTP-POST: signature algorithms', () => {
  const post = (xml: string) =>
    new HttpClient(server.base).request('POST', '/saml/sso', {
      raw: new URLSearchParams({ SAMLRequest: Buffer.from(xml).toString('base64') }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
  it('SHA-1 (RSA-SHA1, or a SHA-1 digest) is refused, as on the Redirect binding; SHA-256/512 are taken', async () => {
    serverLog.allowWarning(/SAML request refused: BAD_SIGNATURE/)
    const rsaSha1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1'
    const sha1 = 'http://www.w3.org/2000/09/xmldsig#sha1'
    refusedWith(
      await post(signXml(authnRequest(sp, idp).xml, sp.privateKeyPem, sp.certificate, { signature: rsaSha1, digest: sha1 })),
      'BAD_SIGNATURE',
    )
    refusedWith(await post(signXml(authnRequest(sp, idp).xml, sp.privateKeyPem, sp.certificate, { signature: rsaSha1 })), 'BAD_SIGNATURE')
    refusedWith(await post(signXml(authnRequest(sp, idp).xml, sp.privateKeyPem, sp.certificate, { digest: sha1 })), 'BAD_SIGNATURE')
    const strong = signXml(authnRequest(sp, idp).xml, sp.privateKeyPem, sp.certificate, {
      signature: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
      digest: 'http://www.w3.org/2001/04/xmlenc#sha512',
    })
    const res = await post(strong)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toMatch(/\/saml\/continue\//)
  })
})

describe('Destination of a signed message', () => {
  it('a signed request without Destination is refused (SAML bindings 3.4.5.2, 3.5.5.2); an unsigned one may omit it', async () => {
    serverLog.allowWarning(/SAML request refused: DESTINATION_MISMATCH/)
    const anonymous = new HttpClient(server.base)
    const noDestination = authnRequest(sp, idp, { destination: null }).xml
    expect(noDestination).not.toContain('Destination')
    refusedWith(await get(anonymous, `${idp.sso}?${redirectQuery(noDestination, sp.privateKeyPem)}`), 'DESTINATION_MISMATCH')
    const posted = await anonymous.request('POST', '/saml/sso', {
      raw: new URLSearchParams({
        SAMLRequest: Buffer.from(signXml(authnRequest(sp, idp, { destination: null }).xml, sp.privateKeyPem, sp.certificate)).toString(
          'base64',
        ),
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    refusedWith(posted, 'DESTINATION_MISMATCH')
    const logout = logoutRequestXml(sp, idp, 'x@example.com', '_x').replace(/ Destination="[^"]*"/, '')
    refusedWith(await get(anonymous, `${idp.slo}?${redirectQuery(logout, sp.privateKeyPem)}`), 'DESTINATION_MISMATCH')
    // Unsigned (an SP that does not sign): Destination stays optional.
    const plain = await get(anonymous, `${idp.sso}?${redirectQuery(authnRequest(unsignedSp, idp, { destination: null }).xml, null)}`)
    expect(plain.headers.get('location')).toMatch(/\/saml\/continue\//)
  })
})

describe('ForceAuthn', () => {
  it('ForceAuthn="true": the session the person came with does not count; they sign in again, then the assertion', async () => {
    idpCert ??= /<ds:X509Certificate>([^<]+)</.exec(await (await fetch(idp.metadata)).text())?.[1] as string
    const user = await verifiedSignUp(server)
    server.clock.advance(60_000)
    const { xml } = authnRequest(sp, idp)
    const forced = xml.replace(' Version="2.0"', ' ForceAuthn="true" Version="2.0"')
    const res = await get(user.client, `${idp.sso}?${redirectQuery(forced, sp.privateKeyPem)}`)
    const cont = res.headers.get('location') as string
    expect(cont).toMatch(/\/saml\/continue\//)
    const toSignIn = await get(user.client, cont)
    expect(toSignIn.status).toBe(303)
    const signIn = new URL(toSignIn.headers.get('location') as string)
    expect(signIn.pathname).toMatch(/\/ui\/sign-in$/)
    expect(signIn.searchParams.get('returnTo')).toBe(cont)
    // Signed in again (a new session): the request is answered, AuthnInstant is the new sign-in.
    const requestedAt = server.clock.now()
    server.clock.advance(1_000)
    expect((await user.client.post('/sign-in/email', { email: user.email, password: user.password })).status).toBe(200)
    const answer = await get(user.client, cont)
    expect(answer.status).toBe(200)
    const root = verifiedResponse(formFields(answer.text).fields.SAMLResponse as string, idpCert)
    expect(Date.parse(first(root, ASSERTION, 'AuthnStatement').getAttribute('AuthnInstant') as string)).toBeGreaterThan(requestedAt)
  })
})

describe('IsPassive', () => {
  it('IsPassive="true" without a session: a signed Response with status NoPassive to the ACS, not the sign-in page', async () => {
    idpCert ??= /<ds:X509Certificate>([^<]+)</.exec(await (await fetch(idp.metadata)).text())?.[1] as string
    const anonymous = new HttpClient(server.base)
    const { id, xml } = authnRequest(sp, idp)
    const passive = xml.replace(' Version="2.0"', ' IsPassive="true" Version="2.0"')
    const res = await get(anonymous, `${idp.sso}?${redirectQuery(passive, sp.privateKeyPem, 'quiet')}`)
    const cont = res.headers.get('location') as string
    expect(cont).toMatch(/\/saml\/continue\//)
    const answer = await get(anonymous, cont)
    expect(answer.status).toBe(200)
    const form = formFields(answer.text)
    expect(form.action).toBe(sp.acs)
    expect(form.fields.RelayState).toBe('quiet')
    const responseXml = Buffer.from(form.fields.SAMLResponse as string, 'base64').toString('utf8')
    const { DOMParser } = await import('@xmldom/xmldom')
    const { SignedXml } = await import('xml-crypto')
    const root = new DOMParser().parseFromString(responseXml, 'text/xml').documentElement as unknown as import('@xmldom/xmldom').Element
    expect(root.localName).toBe('Response')
    expect(root.getAttribute('InResponseTo')).toBe(id)
    expect(root.getAttribute('Destination')).toBe(sp.acs)
    expect(root.getElementsByTagNameNS(ASSERTION, 'Assertion').length).toBe(0)
    const codes = Array.from(root.getElementsByTagNameNS(PROTOCOL, 'StatusCode')).map((c) => c.getAttribute('Value'))
    expect(codes).toEqual(['urn:oasis:names:tc:SAML:2.0:status:Responder', 'urn:oasis:names:tc:SAML:2.0:status:NoPassive'])
    const signatures = root.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')
    expect(signatures.length).toBe(1)
    const verifier = new SignedXml({
      publicCert: `-----BEGIN CERTIFICATE-----\n${idpCert.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`,
    })
    verifier.loadSignature((signatures[0] as unknown as { toString(): string }).toString())
    expect(verifier.checkSignature(responseXml)).toBe(true)
    // Answered: the continue URL is spent.
    serverLog.allowWarning(/SAML request refused: REQUEST_NOT_FOUND/)
    refusedWith(await get(anonymous, cont), 'REQUEST_NOT_FOUND')
  })

  it('IsPassive="true" with a session: the assertion, as usual', async () => {
    const user = await verifiedSignUp(server)
    const passive = authnRequest(sp, idp).xml.replace(' Version="2.0"', ' IsPassive="true" Version="2.0"')
    const res = await get(user.client, `${idp.sso}?${redirectQuery(passive, sp.privateKeyPem)}`)
    const answer = await get(user.client, res.headers.get('location') as string)
    expect(answer.status).toBe(200)
    expect(Buffer.from(formFields(answer.text).fields.SAMLResponse as string, 'base64').toString()).toContain('status:Success')
  })
})

describe('who gets an assertion', () => {
  it('not a person whose email is unverified (identity.requireVerifiedEmail, on by default): the error page, nothing sent; verified, the assertion', async () => {
    serverLog.allowWarning(/SAML request refused: EMAIL_NOT_VERIFIED/)
    const user = await signUp(server.base)
    const res = await get(user.client, `${idp.sso}?${redirectQuery(authnRequest(sp, idp).xml, sp.privateKeyPem)}`)
    refusedWith(await get(user.client, res.headers.get('location') as string), 'EMAIL_NOT_VERIFIED')
    await markVerified(server, user.user.id)
    const again = await get(user.client, `${idp.sso}?${redirectQuery(authnRequest(sp, idp).xml, sp.privateKeyPem)}`)
    expect((await get(user.client, again.headers.get('location') as string)).status).toBe(200)
  })

  it('with identity.requireVerifiedEmail off, an unverified person gets the assertion (better-auth’s requireEmailVerification does not decide here)', async () => {
    const user = await signUp(server.base)
    server.gatehouse.config.update({ identity: { requireVerifiedEmail: false } })
    try {
      const res = await get(user.client, `${idp.sso}?${redirectQuery(authnRequest(sp, idp).xml, sp.privateKeyPem)}`)
      expect((await get(user.client, res.headers.get('location') as string)).status).toBe(200)
    } finally {
      server.gatehouse.config.update({ identity: { requireVerifiedEmail: true } })
    }
  })
})

describe('an API key is not a sign-in', () => {
  it('with apiKey.enableSessionForAPIKeys, a request carrying only a key gets the sign-in page, not an assertion (nor a ForceAuthn answer)', async () => {
    const user = await verifiedSignUp(server)
    server.gatehouse.config.update({ apiKey: { enabled: true, enableSessionForAPIKeys: true } })
    try {
      const created = await user.client.post<{ key: string }>('/api-key/create', { name: 'ci' })
      expect(created.status).toBe(200)
      for (const forceAuthn of [false, true]) {
        const xml = authnRequest(sp, idp).xml.replace(' Version="2.0"', `${forceAuthn ? ' ForceAuthn="true"' : ''} Version="2.0"`)
        const keyOnly = new HttpClient(server.base)
        const res = await get(keyOnly, `${idp.sso}?${redirectQuery(xml, sp.privateKeyPem)}`)
        const cont = res.headers.get('location') as string
        const answer = await keyOnly.request('GET', cont.slice(server.base.length), { headers: { 'x-api-key': created.body.key } })
        expect(answer.status).toBe(303)
        expect(new URL(answer.headers.get('location') as string).pathname).toMatch(/\/ui\/sign-in$/)
      }
    } finally {
      server.gatehouse.config.update({ apiKey: { enabled: null, enableSessionForAPIKeys: null } })
    }
  })
})

describe('metadata booleans', () => {
  it('AuthnRequestsSigned="1" (xs:boolean) requires signed requests as "true" does', async () => {
    serverLog.allowWarning(/SAML request refused: UNSIGNED_REQUEST/)
    const one = makeSp('one-sp')
    const metadata = one.metadata().replace('AuthnRequestsSigned="true"', 'AuthnRequestsSigned="1"')
    expect(metadata).toContain('AuthnRequestsSigned="1"')
    const view = await createServiceProvider(server.gatehouse.ctx, { metadataXml: metadata, name: 'One SP' }, BY)
    expect(view.authnRequestsSigned).toBe(true)
    refusedWith(await get(new HttpClient(server.base), `${idp.sso}?${redirectQuery(authnRequest(one, idp).xml, null)}`), 'UNSIGNED_REQUEST')
  })
})

describe('sign-out at Gatehouse (front channel)', () => {
  it('ends the Gatehouse session at once, whether or not the SPs answer; their answers continue the chain to the end', async () => {
    const user = await verifiedSignUp(server)
    const res = await get(user.client, `${idp.sso}?${redirectQuery(authnRequest(sp, idp).xml, sp.privateKeyPem)}`)
    expect((await get(user.client, res.headers.get('location') as string)).status).toBe(200)

    const out = await user.client.get('/saml/logout')
    expect(out.status).toBe(303)
    const to = new URL(out.headers.get('location') as string)
    expect(`${to.origin}${to.pathname}`).toBe(sp.slo)
    // The SP may never answer (down, broken SLO, the tab closed): the session is over already.
    expect((await user.client.get('/get-session')).body).toBeNull()

    // The SP answers: a signed LogoutResponse back to /saml/slo, then the chain ends on the sign-out page.
    const { inflateRawSync } = await import('node:zlib')
    const request = inflateRawSync(Buffer.from(to.searchParams.get('SAMLRequest') as string, 'base64')).toString()
    const inResponseTo = /ID="([^"]+)"/.exec(request)?.[1] as string
    const answer = `<samlp:LogoutResponse xmlns:samlp="${PROTOCOL}" xmlns:saml="${ASSERTION}" ID="_r${Date.now()}" Version="2.0" IssueInstant="${new Date(server.clock.now()).toISOString()}" Destination="${idp.slo}" InResponseTo="${inResponseTo}"><saml:Issuer>${sp.entityId}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:LogoutResponse>`
    const back = await get(
      user.client,
      `${idp.slo}?${redirectQuery(answer, sp.privateKeyPem, to.searchParams.get('RelayState') as string, 'SAMLResponse')}`,
    )
    expect(back.status).toBe(303)
    expect(back.headers.get('location')).toBe(`${server.base}/ui/sign-out?done=1`)
    expect((await user.client.get('/get-session')).body).toBeNull()
  })
})

describe('GET /saml/logout from another site', () => {
  it('a cross-site navigation with a session gets the hosted sign-out confirmation, not a sign-out (logout CSRF)', async () => {
    const user = await verifiedSignUp(server)
    for (const site of ['cross-site', 'same-site']) {
      const res = await user.client.request('GET', '/saml/logout', { headers: { 'sec-fetch-site': site, 'sec-fetch-mode': 'navigate' } })
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`${server.base}/ui/sign-out`)
      expect((await user.client.get('/get-session')).body).not.toBeNull()
    }
    // From Gatehouse's own pages (same-origin), or typed (none): signed out.
    const own = await user.client.request('GET', '/saml/logout', {
      headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate' },
    })
    expect(own.headers.get('location')).toBe(`${server.base}/ui/sign-out?done=1`)
    expect((await user.client.get('/get-session')).body).toBeNull()
  })
})

describe('LogoutRequest replay', () => {
  it('a LogoutRequest replayed (e.g. from a logged URL) is refused and does not end the session begun since', async () => {
    serverLog.allowWarning(/SAML request refused: REPLAYED_REQUEST/)
    const user = await verifiedSignUp(server)
    const signInToSp = async () => {
      const res = await get(user.client, `${idp.sso}?${redirectQuery(authnRequest(sp, idp).xml, sp.privateKeyPem)}`)
      expect((await get(user.client, res.headers.get('location') as string)).status).toBe(200)
    }
    await signInToSp()
    const logout = logoutRequestXml(sp, idp, user.email, 'unused').replace(/<samlp:SessionIndex>[^<]*<\/samlp:SessionIndex>/, '')
    const url = `${idp.slo}?${redirectQuery(logout, sp.privateKeyPem)}`
    expect(new URL((await get(new HttpClient(server.base), url)).headers.get('location') as string).pathname).toBe('/slo')
    expect((await user.client.get('/get-session')).body).toBeNull()
    // Signed in again (Gatehouse and the SP); the captured LogoutRequest is sent again.
    expect((await user.client.post('/sign-in/email', { email: user.email, password: user.password })).status).toBe(200)
    await signInToSp()
    refusedWith(await get(new HttpClient(server.base), url), 'REPLAYED_REQUEST')
    expect((await user.client.get('/get-session')).body).not.toBeNull()
  })
})
