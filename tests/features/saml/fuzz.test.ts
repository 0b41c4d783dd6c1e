import { randomBytes } from 'node:crypto'
import { deflateRawSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServiceProvider } from '../../../server/features/saml/service-providers.js'
import { HttpClient } from '../../helpers/http.js'
import { serverLog, startTestServer, type TestServer } from '../../helpers/server.js'
import { authnRequest, makeSp, type TestSp, useClock } from './sp.js'

/**
 * A bounded fuzz of the SSO endpoint's inputs: base64 garbage, deflated garbage, mutated requests,
 * a deflate bomb, entity expansion and external entities, on both bindings. Every answer is a
 * refusal on the hosted error page (303, a `saml_*` reason), never a 5xx and never an error logged.
 */

let server: TestServer
let sp: TestSp
const ROUNDS = 60

beforeAll(async () => {
  server = await startTestServer({ config: { saml: { enabled: true } } })
  useClock(() => server.clock.now())
  sp = makeSp('fuzz-sp')
  await createServiceProvider(server.gatehouse.ctx, { metadataXml: sp.metadata({ authnRequestsSigned: false }) }, { via: 'cli' })
})
afterAll(() => server?.close())

// A tiny deterministic generator: the same inputs every run.
let seed = 0x5eed
const rand = (n: number): number => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed % n
}

function mutate(text: string): string {
  const chars = [...text]
  for (let i = 0, k = 1 + rand(6); i < k; i++) {
    const at = rand(chars.length)
    const op = rand(3)
    if (op === 0) chars.splice(at, 1)
    else if (op === 1) chars.splice(at, 0, '<>&"\'\u0000é]]>'.charAt(rand(11)))
    else chars[at] = String.fromCharCode(32 + rand(95))
  }
  return chars.join('')
}

const LOL = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>`
const XXE = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>`

function inputs(): { name: string; redirect?: string; post?: string }[] {
  const base = () => authnRequest(sp, { sso: `${server.base}/saml/sso` }).xml
  const out: { name: string; redirect?: string; post?: string }[] = [
    { name: 'empty', redirect: '' },
    { name: 'not base64', redirect: '%%%***' },
    { name: 'base64 of nothing deflated', redirect: randomBytes(64).toString('base64') },
    { name: 'deflate bomb', redirect: deflateRawSync(Buffer.alloc(2 * 1024 * 1024, 0x41)).toString('base64') },
    {
      name: 'entity expansion (redirect)',
      redirect: deflateRawSync(`${LOL}${base().replace('</samlp:AuthnRequest>', '<x>&c;</x></samlp:AuthnRequest>')}`).toString('base64'),
    },
    { name: 'entity expansion (post)', post: Buffer.from(`${LOL}${base()}`).toString('base64') },
    { name: 'external entity', post: Buffer.from(`${XXE}${base().replace('</saml:Issuer>', '&x;</saml:Issuer>')}`).toString('base64') },
    { name: 'not a SAML message', post: Buffer.from('<html><body/></html>').toString('base64') },
    { name: 'deflated garbage', redirect: deflateRawSync(randomBytes(500)).toString('base64') },
  ]
  for (let i = 0; i < ROUNDS; i++) {
    const xml = mutate(base())
    out.push(
      rand(2)
        ? { name: `mutated ${i} (redirect)`, redirect: deflateRawSync(xml).toString('base64') }
        : { name: `mutated ${i} (post)`, post: Buffer.from(xml).toString('base64') },
    )
  }
  return out
}

describe('SSO endpoint fuzz', () => {
  it(`${ROUNDS} mutated requests and the classic attacks: refused on the error page, never a 5xx`, async () => {
    serverLog.allowWarning(/SAML request refused/)
    const client = new HttpClient(server.base)
    const reasons = new Map<string, string>()
    for (const input of inputs()) {
      const res =
        input.redirect !== undefined
          ? await client.get(`/saml/sso?SAMLRequest=${encodeURIComponent(input.redirect)}`)
          : await client.request('POST', '/saml/sso', {
              raw: new URLSearchParams({ SAMLRequest: input.post as string }).toString(),
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
            })
      expect(res.status, input.name).toBeLessThan(500)
      if (res.status === 303 && (res.headers.get('location') ?? '').includes('/saml/continue/')) {
        // A mutation that left a valid request: accepted, as it should be.
        reasons.set(input.name, 'accepted')
        continue
      }
      expect(res.status, input.name).toBe(303)
      const error = new URL(res.headers.get('location') as string).searchParams.get('error') ?? ''
      expect(error, input.name).toMatch(/^saml_/)
      reasons.set(input.name, error)
    }
    expect(reasons.get('deflate bomb')).toBe('saml_malformed_request')
    expect(reasons.get('entity expansion (redirect)')).toBe('saml_xml_dtd_refused')
    expect(reasons.get('entity expansion (post)')).toBe('saml_xml_dtd_refused')
    expect(reasons.get('external entity')).toBe('saml_xml_dtd_refused')
  }, 120_000)
})
