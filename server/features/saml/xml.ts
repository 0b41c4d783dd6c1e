import { createSign, createVerify, randomBytes } from 'node:crypto'
import { inflateRawSync } from 'node:zlib'
import { DOMParser, type Element } from '@xmldom/xmldom'
import { SignedXml } from 'xml-crypto'
import { SamlRefusal } from './errors.js'

/**
 * SAML messages in and out. Parsing is @xmldom/xmldom's after a refusal of any document type
 * declaration (no DTD, no entity: no XML bomb, no external entity); signatures are xml-crypto's
 * (canonicalisation included), the message read back from what the signature covers, never from the
 * rest of the document (signature wrapping); the HTTP-Redirect binding's signature is checked over
 * the query string's parameters exactly as received.
 */

export const NS = {
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
} as const

export const BINDING = {
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
} as const

const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256'
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#'
const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1'
const SHA1 = 'http://www.w3.org/2000/09/xmldsig#sha1'
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'

/** Query-string signature algorithms accepted (SHA-1 is not). */
const REDIRECT_ALGS: Record<string, string> = {
  [RSA_SHA256]: 'RSA-SHA256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha384': 'RSA-SHA384',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': 'RSA-SHA512',
}

/** At most this much XML after inflating (a deflate bomb stops here). */
const MAX_XML = 256 * 1024

/** An xs:boolean attribute is true: `true` or `1` (whitespace collapsed). */
export const xsdTrue = (value: string | null | undefined): boolean => {
  const v = value?.trim()
  return v === 'true' || v === '1'
}

export const newId = (): string => `_${randomBytes(20).toString('hex')}`

export function escapeXml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] as string)
}

/** Parses a document; refuses a DTD or entity declaration and anything not well-formed. */
export function parseXml(text: string): Element {
  if (text.length > MAX_XML) throw new SamlRefusal('MALFORMED_REQUEST')
  if (/<!\s*(DOCTYPE|ENTITY)/i.test(text)) throw new SamlRefusal('XML_DTD_REFUSED')
  let failed = false
  let root: Element | null = null
  try {
    // xmldom 0.9 throws a ParseError on a fatal error (no root element, unclosed tags) and reports the rest.
    const doc = new DOMParser({
      onError: (level) => {
        if (level !== 'warning') failed = true
      },
    }).parseFromString(text, 'text/xml')
    root = doc.documentElement
  } catch {
    failed = true
  }
  if (failed || !root) throw new SamlRefusal('MALFORMED_REQUEST')
  return root
}

export function children(el: Element, ns: string, local: string): Element[] {
  const out: Element[] = []
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === local) out.push(n as Element)
  }
  return out
}

export const child = (el: Element, ns: string, local: string): Element | undefined => children(el, ns, local)[0]
export const textOf = (el: Element | undefined): string => (el?.textContent ?? '').trim()

function base64(text: string): Buffer {
  const clean = text.replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length === 0) throw new SamlRefusal('MALFORMED_REQUEST')
  return Buffer.from(clean, 'base64')
}

/** The XML of an HTTP-Redirect parameter: base64 of raw DEFLATE. */
export function inflateParam(value: string): string {
  try {
    return inflateRawSync(base64(value), { maxOutputLength: MAX_XML }).toString('utf8')
  } catch (error) {
    if (error instanceof SamlRefusal) throw error
    throw new SamlRefusal('MALFORMED_REQUEST')
  }
}

/** The XML of an HTTP-POST parameter: base64. */
export const decodePostParam = (value: string): string => base64(value).toString('utf8')

const pemOf = (body: string): string =>
  `-----BEGIN CERTIFICATE-----\n${body.replace(/\s+/g, '').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`

export const decode = (raw: string): string => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '))
  } catch {
    throw new SamlRefusal('MALFORMED_REQUEST')
  }
}

/** The parameters of the HTTP-Redirect binding; each may come once. */
const REDIRECT_PARAMS = new Set(['SAMLRequest', 'SAMLResponse', 'RelayState', 'SigAlg', 'Signature'])

/**
 * HTTP-Redirect: the raw (still URL-encoded) values of the query as received, by decoded name, for
 * the signature check, which covers `SAMLRequest=…&RelayState=…&SigAlg=…` byte for byte (SAML
 * bindings §3.4.4.1). The message and RelayState are read from these same values: a binding
 * parameter given twice (`SAMLRequest` and `SAML%52equest` included) is refused, so no other copy
 * than the signed one can be read.
 */
export function rawQueryParams(search: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const part of search.replace(/^\?/, '').split('&')) {
    if (!part) continue
    const eq = part.indexOf('=')
    const key = decode(eq < 0 ? part : part.slice(0, eq))
    if (out.has(key)) {
      if (REDIRECT_PARAMS.has(key)) throw new SamlRefusal('MALFORMED_REQUEST')
      continue
    }
    out.set(key, eq < 0 ? '' : part.slice(eq + 1))
  }
  return out
}

/** Verifies a Redirect-binding signature over the raw parameters; true when one of `certs` (base64 DER) verifies. */
export function verifyRedirectSignature(raw: Map<string, string>, kind: 'SAMLRequest' | 'SAMLResponse', certs: string[]): boolean {
  const sigAlg = raw.get('SigAlg')
  const signature = raw.get('Signature')
  const message = raw.get(kind)
  if (sigAlg === undefined || signature === undefined || message === undefined) return false
  const alg = REDIRECT_ALGS[decode(sigAlg)]
  if (!alg) return false
  const relay = raw.get('RelayState')
  const signed = `${kind}=${message}${relay !== undefined ? `&RelayState=${relay}` : ''}&SigAlg=${sigAlg}`
  const sig = base64(decode(signature))
  return certs.some((cert) => {
    try {
      return createVerify(alg).update(signed).verify(pemOf(cert), sig)
    } catch {
      return false
    }
  })
}

/** A query string for the Redirect binding, signed with RSA-SHA256 (parameters encoded once, signed as sent). */
export function signedRedirectQuery(
  kind: 'SAMLRequest' | 'SAMLResponse',
  deflatedBase64: string,
  relayState: string | null,
  privateKeyPem: string,
): string {
  let q = `${kind}=${encodeURIComponent(deflatedBase64)}`
  if (relayState !== null) q += `&RelayState=${encodeURIComponent(relayState)}`
  q += `&SigAlg=${encodeURIComponent(RSA_SHA256)}`
  const signature = createSign('RSA-SHA256').update(q).sign(privateKeyPem, 'base64')
  return `${q}&Signature=${encodeURIComponent(signature)}`
}

/**
 * Verifies the enveloped signature of a POSTed message's root element with one of `certs`: the
 * Signature must be the root's child and reference the root's ID. Returns the root parsed again from
 * what was signed (xml-crypto's canonical signed reference), so nothing outside the signature is read;
 * null when there is no Signature; throws BAD_SIGNATURE when it does not verify.
 */
export function verifyEnvelopedSignature(xml: string, root: Element, certs: string[], spEntityId: string): Element | null {
  const signatures = children(root, NS.dsig, 'Signature')
  if (signatures.length === 0) return null
  const id = root.getAttribute('ID') ?? ''
  if (signatures.length > 1 || !id) throw new SamlRefusal('BAD_SIGNATURE', spEntityId)
  const signature = signatures[0] as Element
  const refs = signature.getElementsByTagNameNS(NS.dsig, 'Reference')
  if (refs.length !== 1 || refs[0]?.getAttribute('URI') !== `#${id}`) throw new SamlRefusal('BAD_SIGNATURE', spEntityId)
  for (const cert of certs) {
    try {
      const verifier = new SignedXml({ publicCert: pemOf(cert) })
      // SHA-1 is refused here as on the Redirect binding (REDIRECT_ALGS): xml-crypto takes it by default.
      delete verifier.SignatureAlgorithms[RSA_SHA1]
      delete verifier.HashAlgorithms[SHA1]
      verifier.loadSignature(signature.toString())
      if (!verifier.checkSignature(xml)) continue
      const signed = verifier.getSignedReferences()
      if (signed.length !== 1) continue
      const again = parseXml(signed[0] as string)
      if (again.getAttribute('ID') !== id || again.localName !== root.localName || again.namespaceURI !== root.namespaceURI) continue
      return again
    } catch {}
  }
  throw new SamlRefusal('BAD_SIGNATURE', spEntityId)
}

/** Signs `xpath`'s element (enveloped, exclusive c14n, RSA-SHA256), the Signature placed after its Issuer. */
export function signElement(xml: string, local: string, signingKeyPem: string, certificatePem: string): string {
  const signer = new SignedXml({
    privateKey: signingKeyPem,
    publicCert: certificatePem,
    signatureAlgorithm: RSA_SHA256,
    canonicalizationAlgorithm: EXC_C14N,
  })
  const xpath = `//*[local-name(.)='${local}']`
  signer.addReference({ xpath, digestAlgorithm: SHA256, transforms: [ENVELOPED, EXC_C14N] })
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: `${xpath}/*[local-name(.)='Issuer']`, action: 'after' } })
  return signer.getSignedXml()
}
