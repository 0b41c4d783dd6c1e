import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { DOMParser, type Element } from '@xmldom/xmldom'
import { eq } from 'drizzle-orm'
import { expect } from 'vitest'
import { SignedXml } from 'xml-crypto'
import type { AuthContext } from '../../../server/core/context.js'
import { user } from '../../../server/db/schema.js'
import { selfSignedCertificate } from '../../../server/features/saml/cert.js'
import { type HttpClient, type SignedUp, signUp } from '../../helpers/http.js'

/**
 * A service provider written for the raw-request tests: its key and certificate, its metadata, and
 * AuthnRequests / LogoutRequests built and signed by hand (xml-crypto for HTTP-POST, the query
 * signature for HTTP-Redirect), so each test can spoil exactly one thing.
 */

export const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol'
export const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion'
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'

export interface TestSp {
  entityId: string
  acs: string
  slo: string
  privateKey: KeyObject
  privateKeyPem: string
  certificate: string
  metadata(options?: { authnRequestsSigned?: boolean; extraAcs?: string[] }): string
}

const body = (pem: string): string => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '')

export function makeSp(name = 'sp'): TestSp {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const certificate = selfSignedCertificate({
    privateKey,
    commonName: `${name}.example`,
    notBefore: new Date(Date.now() - 86_400_000),
    notAfter: new Date(Date.now() + 365 * 86_400_000),
  })
  const origin = `https://${name}.example`
  const sp: TestSp = {
    entityId: `${origin}/metadata`,
    acs: `${origin}/acs`,
    slo: `${origin}/slo`,
    privateKey,
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    certificate,
    metadata({ authnRequestsSigned = true, extraAcs = [] } = {}) {
      const acs = [sp.acs, ...extraAcs]
        .map(
          (url, i) =>
            `<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${url}" index="${i}"${i === 0 ? ' isDefault="true"' : ''}/>`,
        )
        .join('')
      return `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${sp.entityId}">
<md:SPSSODescriptor AuthnRequestsSigned="${authnRequestsSigned}" WantAssertionsSigned="true" protocolSupportEnumeration="${PROTOCOL}">
<md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>${body(certificate)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${sp.slo}"/>
<md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
${acs}
</md:SPSSODescriptor></md:EntityDescriptor>`
    },
  }
  return sp
}

/** The IdP's clock (a test server's TestClock), for IssueInstant. */
let clockNow = (): number => Date.now()
export const useClock = (now: () => number): void => {
  clockNow = now
}

let n = 0
export const requestId = (): string => `_req${Date.now().toString(36)}${(n++).toString(36)}`

export interface AuthnRequestOptions {
  id?: string
  issuer?: string
  destination?: string | null
  acsUrl?: string | null
  issueInstant?: Date
}

export function authnRequest(sp: TestSp, idp: { sso: string }, o: AuthnRequestOptions = {}): { id: string; xml: string } {
  const id = o.id ?? requestId()
  const destination = o.destination === null ? '' : ` Destination="${o.destination ?? idp.sso}"`
  const acs = o.acsUrl === null ? '' : ` AssertionConsumerServiceURL="${o.acsUrl ?? sp.acs}"`
  const xml = `<samlp:AuthnRequest xmlns:samlp="${PROTOCOL}" xmlns:saml="${ASSERTION}" ID="${id}" Version="2.0" IssueInstant="${(o.issueInstant ?? new Date(clockNow())).toISOString()}"${destination}${acs} ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"><saml:Issuer>${o.issuer ?? sp.entityId}</saml:Issuer><samlp:NameIDPolicy AllowCreate="true"/></samlp:AuthnRequest>`
  return { id, xml }
}

/** A LogoutRequest from `sp`; `sessionIndex` null: none (every session of the NameID at the SP, SAML core §3.7.3.2). */
export function logoutRequestXml(
  sp: TestSp,
  idp: { slo: string },
  nameId: string,
  sessionIndex: string | null,
  o: { issueInstant?: Date } = {},
): string {
  const index = sessionIndex === null ? '' : `<samlp:SessionIndex>${sessionIndex}</samlp:SessionIndex>`
  return `<samlp:LogoutRequest xmlns:samlp="${PROTOCOL}" xmlns:saml="${ASSERTION}" ID="${requestId()}" Version="2.0" IssueInstant="${(o.issueInstant ?? new Date(clockNow())).toISOString()}" Destination="${idp.slo}"><saml:Issuer>${sp.entityId}</saml:Issuer><saml:NameID>${nameId}</saml:NameID>${index}</samlp:LogoutRequest>`
}

/** `sp`'s successful LogoutResponse to the IdP's LogoutRequest `inResponseTo`; `destination` null: no Destination attribute. */
export function logoutResponseXml(sp: TestSp, inResponseTo: string, destination: string | null): string {
  const to = destination === null ? '' : ` Destination="${destination}"`
  return `<samlp:LogoutResponse xmlns:samlp="${PROTOCOL}" xmlns:saml="${ASSERTION}" ID="${requestId()}" Version="2.0" IssueInstant="${new Date(clockNow()).toISOString()}"${to} InResponseTo="${inResponseTo}"><saml:Issuer>${sp.entityId}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:LogoutResponse>`
}

/** The SAML message an HTTP-Redirect URL carries (`SAMLRequest` or `SAMLResponse`), inflated. */
export function redirectMessage(location: string, kind = 'SAMLRequest'): string {
  return inflateRawSync(Buffer.from(new URL(location).searchParams.get(kind) ?? '', 'base64')).toString('utf8')
}

/**
 * The hosted error page a refusal lands on (a 303 to `<base>/ui/error?error=saml_<reason>`), with
 * the SAML code the server gave.
 */
export function expectRefused(base: string, res: { status: number; headers: Headers }, reason: string): void {
  expect(res.status).toBe(303)
  const location = new URL(res.headers.get('location') ?? '')
  expect(location.pathname).toBe(new URL(`${base}/ui/error`).pathname)
  expect(location.searchParams.get('error')).toBe(`saml_${reason.toLowerCase()}`)
}

/** HTTP-Redirect query: deflated, and signed with `key` unless `unsigned`. */
export function redirectQuery(xml: string, key: string | null, relayState?: string, kind = 'SAMLRequest'): string {
  let q = `${kind}=${encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'))}`
  if (relayState !== undefined) q += `&RelayState=${encodeURIComponent(relayState)}`
  if (!key) return q
  q += `&SigAlg=${encodeURIComponent(RSA_SHA256)}`
  return `${q}&Signature=${encodeURIComponent(createSign('RSA-SHA256').update(q).sign(key, 'base64'))}`
}

/** An enveloped XML signature over the root element (HTTP-POST binding). */
export function signXml(xml: string, key: string, cert: string, algs: { signature?: string; digest?: string } = {}): string {
  const signer = new SignedXml({
    privateKey: key,
    publicCert: cert,
    signatureAlgorithm: algs.signature ?? RSA_SHA256,
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  })
  signer.addReference({
    xpath: '/*',
    digestAlgorithm: algs.digest ?? 'http://www.w3.org/2001/04/xmlenc#sha256',
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
  })
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: "/*/*[local-name(.)='Issuer']", action: 'after' } })
  return signer.getSignedXml()
}

/** The hidden fields of the auto-submitting form. */
export function formFields(html: string): { action: string; fields: Record<string, string> } {
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? ''
  const fields: Record<string, string> = {}
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1] as string] = unescapeXml(m[2] as string)
  return { action: unescapeXml(action), fields }
}
const unescapeXml = (s: string): string =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

/** Verifies the Response's and the Assertion's signatures with the IdP certificate; returns the signed Response document. */
export function verifiedResponse(base64: string, idpCert: string): Element {
  const xml = Buffer.from(base64, 'base64').toString('utf8')
  const doc = new DOMParser().parseFromString(xml, 'text/xml')
  const root = doc.documentElement as Element
  const pem = `-----BEGIN CERTIFICATE-----\n${idpCert.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`
  const sigs = Array.from(root.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature'))
  if (sigs.length !== 2) throw new Error(`expected two signatures, found ${sigs.length}`)
  for (const sig of sigs) {
    const v = new SignedXml({ publicCert: pem })
    v.loadSignature(sig.toString())
    if (!v.checkSignature(xml)) throw new Error('signature does not verify')
  }
  return root
}

export const first = (el: Element, ns: string, local: string): Element => {
  const found = el.getElementsByTagNameNS(ns, local)[0]
  if (!found) throw new Error(`no ${local}`)
  return found
}

export function attributesOf(root: Element): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const a of Array.from(root.getElementsByTagNameNS(ASSERTION, 'Attribute'))) {
    out[a.getAttribute('Name') as string] = Array.from(a.getElementsByTagNameNS(ASSERTION, 'AttributeValue')).map(
      (v) => v.textContent ?? '',
    )
  }
  return out
}

/**
 * A person signed up through the API whose email is then marked verified (as an admin's
 * `emailVerified` would): SAML vouches only for verified people while `identity.requireVerifiedEmail` is on.
 */
export async function verifiedPerson(
  server: { base: string; gatehouse: { ctx: AuthContext } },
  overrides: Record<string, unknown> = {},
): Promise<SignedUp> {
  const person = await signUp(server.base, overrides)
  await server.gatehouse.ctx.db.update(user).set({ emailVerified: true }).where(eq(user.id, person.user.id))
  return person
}

/** Every certificate the IdP's metadata publishes (base64 DER). */
export async function publishedIdpCertificates(base: string): Promise<string[]> {
  const xml = await (await fetch(`${base}/saml/metadata`)).text()
  return [...xml.matchAll(/<ds:X509Certificate>([^<]+)</g)].map((m) => m[1] as string)
}

/**
 * `client`'s Gatehouse session signs in at `at` (SP-initiated over HTTP-Redirect, the AuthnRequest
 * signed when `signed`): the Response must verify with a published IdP certificate; its NameID and
 * SessionIndex, which a LogoutRequest of that SP names.
 */
export async function signInAt(
  base: string,
  client: HttpClient,
  at: TestSp,
  { signed = false }: { signed?: boolean } = {},
): Promise<{ nameId: string; sessionIndex: string }> {
  const query = redirectQuery(authnRequest(at, { sso: `${base}/saml/sso` }).xml, signed ? at.privateKeyPem : null)
  const res = await client.get(`/saml/sso?${query}`)
  expect(res.headers.get('location')).toMatch(/\/saml\/continue\//)
  const answer = await client.get((res.headers.get('location') as string).slice(base.length))
  expect(answer.status).toBe(200)
  const b64 = formFields(answer.text).fields.SAMLResponse as string
  for (const cert of await publishedIdpCertificates(base)) {
    let root: Element
    try {
      root = verifiedResponse(b64, cert)
    } catch {
      continue
    }
    return {
      nameId: first(root, ASSERTION, 'NameID').textContent ?? '',
      sessionIndex: first(root, ASSERTION, 'AuthnStatement').getAttribute('SessionIndex') ?? '',
    }
  }
  throw new Error('the Response verifies with no published IdP certificate')
}
