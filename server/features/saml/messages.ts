import { deflateRawSync } from 'node:zlib'
import { NAME_ID_FORMATS, type NameIdFormat } from './config.js'
import type { SigningKey } from './keys.js'
import { escapeXml, NS, newId, signElement, signedRedirectQuery } from './xml.js'

/** The messages Gatehouse sends: the login Response, LogoutResponse and LogoutRequest. */

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success'
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer'
const PPT = 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport'
const BASIC = 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic'
/** How long an assertion may be presented: the contract's at most 5 minutes. */
export const ASSERTION_LIFETIME_MS = 5 * 60_000

export interface LoginResponseInput {
  idpEntityId: string
  spEntityId: string
  acsUrl: string
  inResponseTo: string | null
  now: number
  authnInstant: number
  sessionIndex: string
  nameIdFormat: NameIdFormat
  nameId: string
  attributes: Record<string, string[]>
  key: SigningKey
}

function attributeXml(name: string, values: string[]): string {
  const vals = values.map((v) => `<saml:AttributeValue xsi:type="xs:string">${escapeXml(v)}</saml:AttributeValue>`).join('')
  return `<saml:Attribute Name="${escapeXml(name)}" NameFormat="${BASIC}">${vals}</saml:Attribute>`
}

/** A Response signed over a signed Assertion (both RSA-SHA256, exclusive c14n), base64 for the POST form. */
export function loginResponse(input: LoginResponseInput): { id: string; base64: string } {
  const id = newId()
  const assertionId = newId()
  const now = iso(input.now)
  const until = iso(input.now + ASSERTION_LIFETIME_MS)
  const inResponseTo = input.inResponseTo ? ` InResponseTo="${escapeXml(input.inResponseTo)}"` : ''
  const issuer = `<saml:Issuer>${escapeXml(input.idpEntityId)}</saml:Issuer>`
  const spQualifier =
    NAME_ID_FORMATS[input.nameIdFormat] === NAME_ID_FORMATS.persistent ? ` SPNameQualifier="${escapeXml(input.spEntityId)}"` : ''
  const attributes = Object.entries(input.attributes)
    .filter(([, values]) => values.length > 0)
    .map(([name, values]) => attributeXml(name, values))
    .join('')
  const assertion =
    `<saml:Assertion xmlns:saml="${NS.assertion}" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ID="${assertionId}" Version="2.0" IssueInstant="${now}">` +
    issuer +
    `<saml:Subject><saml:NameID Format="${NAME_ID_FORMATS[input.nameIdFormat]}"${spQualifier}>${escapeXml(input.nameId)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="${BEARER}"><saml:SubjectConfirmationData${inResponseTo} NotOnOrAfter="${until}" Recipient="${escapeXml(input.acsUrl)}"/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${now}" NotOnOrAfter="${until}"><saml:AudienceRestriction><saml:Audience>${escapeXml(input.spEntityId)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(input.authnInstant)}" SessionIndex="${escapeXml(input.sessionIndex)}"><saml:AuthnContext><saml:AuthnContextClassRef>${PPT}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '') +
    '</saml:Assertion>'
  const response =
    `<samlp:Response xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${id}" Version="2.0" IssueInstant="${now}" Destination="${escapeXml(input.acsUrl)}"${inResponseTo}>` +
    issuer +
    `<samlp:Status><samlp:StatusCode Value="${SUCCESS}"/></samlp:Status>` +
    assertion +
    '</samlp:Response>'
  const signedAssertion = signElement(response, 'Assertion', input.key.privateKeyPem, input.key.certificate)
  const signed = signElement(signedAssertion, 'Response', input.key.privateKeyPem, input.key.certificate)
  return { id, base64: Buffer.from(signed, 'utf8').toString('base64') }
}

/** A Response without an assertion: `status` (Requester or Responder) with a second-level code (SAML core 3.2.2.2), signed. */
export function statusResponse(input: {
  idpEntityId: string
  acsUrl: string
  inResponseTo: string | null
  now: number
  status: 'Requester' | 'Responder'
  subStatus: 'NoPassive'
  key: SigningKey
}): string {
  const inResponseTo = input.inResponseTo ? ` InResponseTo="${escapeXml(input.inResponseTo)}"` : ''
  const xml =
    `<samlp:Response xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${newId()}" Version="2.0" IssueInstant="${iso(input.now)}" Destination="${escapeXml(input.acsUrl)}"${inResponseTo}>` +
    `<saml:Issuer>${escapeXml(input.idpEntityId)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:${input.status}"><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:${input.subStatus}"/></samlp:StatusCode></samlp:Status>` +
    '</samlp:Response>'
  return Buffer.from(signElement(xml, 'Response', input.key.privateKeyPem, input.key.certificate), 'utf8').toString('base64')
}

export interface LogoutResponseInput {
  idpEntityId: string
  destination: string
  inResponseTo: string
  now: number
}

function logoutResponseXml(input: LogoutResponseInput): string {
  return (
    `<samlp:LogoutResponse xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${newId()}" Version="2.0" IssueInstant="${iso(input.now)}" Destination="${escapeXml(input.destination)}" InResponseTo="${escapeXml(input.inResponseTo)}">` +
    `<saml:Issuer>${escapeXml(input.idpEntityId)}</saml:Issuer><samlp:Status><samlp:StatusCode Value="${SUCCESS}"/></samlp:Status></samlp:LogoutResponse>`
  )
}

export interface LogoutRequestInput {
  idpEntityId: string
  destination: string
  now: number
  nameId: string
  nameIdFormat: string
  spEntityId: string
  /** Absent: every session of the NameID at the SP (SAML core §3.7.3.2). */
  sessionIndex?: string
}

function logoutRequestXml(input: LogoutRequestInput & { id: string }): string {
  const qualifier = input.nameIdFormat === NAME_ID_FORMATS.persistent ? ` SPNameQualifier="${escapeXml(input.spEntityId)}"` : ''
  return (
    `<samlp:LogoutRequest xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${input.id}" Version="2.0" IssueInstant="${iso(input.now)}" Destination="${escapeXml(input.destination)}" NotOnOrAfter="${iso(input.now + ASSERTION_LIFETIME_MS)}">` +
    `<saml:Issuer>${escapeXml(input.idpEntityId)}</saml:Issuer><saml:NameID Format="${escapeXml(input.nameIdFormat)}"${qualifier}>${escapeXml(input.nameId)}</saml:NameID>` +
    (input.sessionIndex ? `<samlp:SessionIndex>${escapeXml(input.sessionIndex)}</samlp:SessionIndex>` : '') +
    '</samlp:LogoutRequest>'
  )
}

/** Where a message goes: a URL to redirect to (HTTP-Redirect, query signed) or a POST form (HTTP-POST, XML signed). */
export type Outgoing =
  | { redirect: string }
  | { post: { url: string; field: 'SAMLRequest' | 'SAMLResponse'; value: string; relayState: string | null } }

function outgoing(
  xml: string,
  local: string,
  field: 'SAMLRequest' | 'SAMLResponse',
  target: { binding: 'redirect' | 'post'; url: string },
  relayState: string | null,
  key: SigningKey,
): Outgoing {
  if (target.binding === 'redirect') {
    const deflated = deflateRawSync(Buffer.from(xml, 'utf8')).toString('base64')
    const query = signedRedirectQuery(field, deflated, relayState, key.privateKeyPem)
    return { redirect: `${target.url}${target.url.includes('?') ? '&' : '?'}${query}` }
  }
  const signed = signElement(xml, local, key.privateKeyPem, key.certificate)
  return { post: { url: target.url, field, value: Buffer.from(signed, 'utf8').toString('base64'), relayState } }
}

export function logoutResponse(
  input: LogoutResponseInput,
  target: { binding: 'redirect' | 'post'; url: string },
  relayState: string | null,
  key: SigningKey,
): Outgoing {
  return outgoing(logoutResponseXml(input), 'LogoutResponse', 'SAMLResponse', target, relayState, key)
}

export function logoutRequest(
  input: LogoutRequestInput,
  target: { binding: 'redirect' | 'post'; url: string },
  relayState: string | null,
  key: SigningKey,
): { id: string; outgoing: Outgoing } {
  const id = newId()
  return { id, outgoing: outgoing(logoutRequestXml({ ...input, id }), 'LogoutRequest', 'SAMLRequest', target, relayState, key) }
}

/** The auto-submitting form of the HTTP-POST binding (a button when scripts are off). */
export function postForm(post: { url: string; field: string; value: string; relayState: string | null }, nonce: string): string {
  const relay = post.relayState !== null ? `<input type="hidden" name="RelayState" value="${escapeXml(post.relayState)}">` : ''
  return `<!doctype html><html><head><meta charset="utf-8"><title>Signing in…</title></head><body>
<form method="post" action="${escapeXml(post.url)}"><input type="hidden" name="${post.field}" value="${escapeXml(post.value)}">${relay}
<noscript><button type="submit">Continue</button></noscript></form>
<script nonce="${nonce}">document.forms[0].submit()</script></body></html>`
}
