import type { Element } from '@xmldom/xmldom'
import { NAME_ID_FORMATS } from './config.js'
import { samlError } from './errors.js'
import { BINDING, child, children, escapeXml, NS, parseXml, textOf, xsdTrue } from './xml.js'

/** What Gatehouse reads from a service provider's metadata. */
export interface SpMetadata {
  entityId: string
  /** HTTP-POST AssertionConsumerService endpoints, in document order. */
  acs: { location: string; index: number | null; isDefault: boolean }[]
  slo: { binding: string; location: string; responseLocation: string | null }[]
  /** Base64 DER of the signing certificates (KeyDescriptor use="signing" or without use). */
  signingCerts: string[]
  authnRequestsSigned: boolean
  wantAssertionsSigned: boolean
  nameIdFormats: string[]
}

function httpUrl(value: string): string | null {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null
  } catch {
    return null
  }
}

/** Reads an SP's metadata (one EntityDescriptor with an SPSSODescriptor); refuses what it cannot use. */
export function parseSpMetadata(xml: string): SpMetadata {
  let root: Element
  try {
    root = parseXml(xml)
  } catch {
    throw samlError(400, 'INVALID_METADATA')
  }
  if (root.namespaceURI !== NS.metadata || root.localName !== 'EntityDescriptor') throw samlError(400, 'INVALID_METADATA')
  const entityId = root.getAttribute('entityID')?.trim() ?? ''
  const sp = child(root, NS.metadata, 'SPSSODescriptor')
  if (!entityId || !sp) throw samlError(400, 'INVALID_METADATA')
  const acs: SpMetadata['acs'] = []
  for (const el of children(sp, NS.metadata, 'AssertionConsumerService')) {
    const location = httpUrl(el.getAttribute('Location') ?? '')
    if (el.getAttribute('Binding') !== BINDING.post || !location) continue
    const index = Number.parseInt(el.getAttribute('index') ?? '', 10)
    acs.push({ location, index: Number.isFinite(index) ? index : null, isDefault: xsdTrue(el.getAttribute('isDefault')) })
  }
  if (!acs.length) throw samlError(400, 'METADATA_NO_ACS')
  const slo: SpMetadata['slo'] = []
  for (const el of children(sp, NS.metadata, 'SingleLogoutService')) {
    const binding = el.getAttribute('Binding') ?? ''
    const location = httpUrl(el.getAttribute('Location') ?? '')
    if ((binding !== BINDING.redirect && binding !== BINDING.post) || !location) continue
    slo.push({ binding, location, responseLocation: httpUrl(el.getAttribute('ResponseLocation') ?? '') })
  }
  const signingCerts: string[] = []
  for (const kd of children(sp, NS.metadata, 'KeyDescriptor')) {
    const use = kd.getAttribute('use')
    if (use && use !== 'signing') continue
    for (const cert of kd.getElementsByTagNameNS(NS.dsig, 'X509Certificate')) {
      const body = textOf(cert).replace(/\s+/g, '')
      if (body) signingCerts.push(body)
    }
  }
  return {
    entityId,
    acs,
    slo,
    signingCerts,
    authnRequestsSigned: xsdTrue(sp.getAttribute('AuthnRequestsSigned')),
    wantAssertionsSigned: xsdTrue(sp.getAttribute('WantAssertionsSigned')),
    nameIdFormats: children(sp, NS.metadata, 'NameIDFormat').map(textOf).filter(Boolean),
  }
}

/** The ACS an answer goes to: the one the request names (by URL or index) if the metadata has it, else the default; null: not in the metadata. */
export function chooseAcs(meta: SpMetadata, asked: { url?: string | null; index?: number | null }): string | null {
  if (asked.url) return meta.acs.find((a) => a.location === asked.url)?.location ?? null
  if (asked.index !== undefined && asked.index !== null) return meta.acs.find((a) => a.index === asked.index)?.location ?? null
  return (meta.acs.find((a) => a.isDefault) ?? meta.acs[0])?.location ?? null
}

/** The IdP's metadata document (entityID `{baseURL}/saml/metadata`). */
export function idpMetadataXml(baseURL: string, certificates: string[]): string {
  const keys = certificates
    .map(
      (c) =>
        `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${c}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`,
    )
    .join('')
  const sso = escapeXml(`${baseURL}/saml/sso`)
  const slo = escapeXml(`${baseURL}/saml/slo`)
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="${NS.metadata}" xmlns:ds="${NS.dsig}" entityID="${escapeXml(`${baseURL}/saml/metadata`)}"><md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="${NS.protocol}">${keys}<md:SingleLogoutService Binding="${BINDING.redirect}" Location="${slo}"/><md:SingleLogoutService Binding="${BINDING.post}" Location="${slo}"/>${[
    ...new Set(Object.values(NAME_ID_FORMATS)),
  ]
    .map((f) => `<md:NameIDFormat>${f}</md:NameIDFormat>`)
    .join(
      '',
    )}<md:SingleSignOnService Binding="${BINDING.redirect}" Location="${sso}"/><md:SingleSignOnService Binding="${BINDING.post}" Location="${sso}"/></md:IDPSSODescriptor></md:EntityDescriptor>
`
}
