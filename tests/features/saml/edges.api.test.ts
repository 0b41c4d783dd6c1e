import { createHmac, hkdfSync } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { samlRequest, samlServiceProvider, user } from '../../../server/db/schema.js'
import { MAX_PENDING_PER_SOURCE } from '../../../server/features/saml/flows.js'
import { rotateCertificate } from '../../../server/features/saml/keys.js'
import { createServiceProvider, findServiceProviderByRef } from '../../../server/features/saml/service-providers.js'
import { HttpClient } from '../../helpers/http.js'
import { joinTeamsNamed, noSeparator, SEPARATOR_TEAM_NAMES } from '../../helpers/members.js'
import { serverLog, sqliteOf, startTestServer, type TestServer, testEngine } from '../../helpers/server.js'
import {
  ASSERTION,
  attributesOf,
  authnRequest,
  logoutRequestXml,
  PROTOCOL,
  first,
  formFields,
  makeSp,
  redirectQuery,
  type TestSp,
  useClock,
  verifiedPerson,
  verifiedResponse,
} from './sp.js'

/**
 * What a stranger can make the identity provider store before anyone signs in (issue 47): RelayState
 * at most 1 KiB, at most MAX_PENDING_PER_SOURCE unanswered AuthnRequests per source (an IPv4
 * address, an IPv6 /64, as the rate limiter groups them), each expiring after 10 minutes and then
 * swept. On SQLite and PostgreSQL.
 */

let server: TestServer
let sp: TestSp
let idp: { sso: string; slo: string }

beforeAll(async () => {
  server = await startTestServer({ config: { saml: { enabled: true } } })
  idp = { sso: `${server.base}/saml/sso`, slo: `${server.base}/saml/slo` }
  useClock(() => server.clock.now())
  sp = makeSp('edge-sp')
  await createServiceProvider(
    server.gatehouse.ctx,
    { metadataXml: sp.metadata({ authnRequestsSigned: false }), name: 'Edge SP' },
    { via: 'cli' },
  )
})
afterAll(() => server?.close())

const stored = async (): Promise<number> => (await server.gatehouse.ctx.db.select().from(samlRequest)).length
const storedFrom = async (source: string): Promise<number> =>
  (await server.gatehouse.ctx.db.select().from(samlRequest).where(eq(samlRequest.source, source))).length

/** An unsigned AuthnRequest (the SP does not sign) over HTTP-Redirect, from `ip` (X-Forwarded-For through the loopback proxy). */
function sso(ip: string, relayState?: string, client = new HttpClient(server.base)) {
  return client.request('GET', `/saml/sso?${redirectQuery(authnRequest(sp, idp).xml, null, relayState)}`, {
    headers: { 'x-forwarded-for': ip },
  })
}

function refusedWith(res: { status: number; headers: Headers }, reason: string): void {
  expect(res.status).toBe(303)
  const location = new URL(res.headers.get('location') ?? '')
  expect(location.pathname).toBe(new URL(`${server.base}/ui/error`).pathname)
  expect(location.searchParams.get('error')).toBe(`saml_${reason.toLowerCase()}`)
}

function accepted(res: { status: number; headers: Headers }): string {
  expect(res.status).toBe(303)
  const location = res.headers.get('location') as string
  expect(location).toMatch(/\/saml\/continue\//)
  return location
}

describe('RelayState', () => {
  it('over 1024 bytes (UTF-8) is refused on both bindings with the error page, and nothing is stored; 1024 bytes are taken', async () => {
    serverLog.allowWarning(/SAML request refused: RELAY_STATE_TOO_LONG/)
    const before = await stored()
    // 513 two-byte characters: 1026 bytes, 513 characters.
    refusedWith(await sso('192.0.2.1', 'é'.repeat(513)), 'RELAY_STATE_TOO_LONG')
    refusedWith(await sso('192.0.2.1', 'x'.repeat(1025)), 'RELAY_STATE_TOO_LONG')
    const posted = await new HttpClient(server.base).request('POST', '/saml/sso', {
      raw: new URLSearchParams({
        SAMLRequest: Buffer.from(authnRequest(sp, idp).xml).toString('base64'),
        RelayState: 'x'.repeat(512 * 1024),
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '192.0.2.1' },
    })
    refusedWith(posted, 'RELAY_STATE_TOO_LONG')
    const location = new URL(posted.headers.get('location') as string)
    expect(location.searchParams.get('error_description')).toBe(
      'The application sent a RelayState longer than 1024 bytes, which is refused',
    )
    expect(await stored()).toBe(before)

    // At the limit: stored, and given back to the SP with the assertion.
    const person = await verifiedPerson(server)
    const relay = 'é'.repeat(512)
    const cont = accepted(await sso('192.0.2.1', relay, person.client))
    const answer = await person.client.get(cont.slice(server.base.length))
    expect(answer.status).toBe(200)
    expect(answer.text).toContain(`name="RelayState" value="${relay}"`)
  }, 120_000)

  it('an over-long message ID is refused (it is stored too)', async () => {
    serverLog.allowWarning(/SAML request refused: MALFORMED_REQUEST/)
    const before = await stored()
    const long = authnRequest(sp, idp, { id: `_${'a'.repeat(256)}` }).xml
    refusedWith(
      await new HttpClient(server.base).request('GET', `/saml/sso?${redirectQuery(long, null)}`, {
        headers: { 'x-forwarded-for': '192.0.2.1' },
      }),
      'MALFORMED_REQUEST',
    )
    expect(await stored()).toBe(before)
  }, 120_000)
})

describe('pending AuthnRequests per source', () => {
  it(`at most ${MAX_PENDING_PER_SOURCE} per IPv4 address and per IPv6 /64; an answered one no longer counts`, async () => {
    serverLog.allowWarning(/SAML request refused: TOO_MANY_PENDING_REQUESTS/)
    for (let i = 0; i < MAX_PENDING_PER_SOURCE; i++) accepted(await sso('198.51.100.7', 'r'.repeat(1024)))
    const before = await stored()
    const refused = await sso('198.51.100.7')
    refusedWith(refused, 'TOO_MANY_PENDING_REQUESTS')
    expect(new URL(refused.headers.get('location') as string).searchParams.get('error_description')).toBe(
      'Too many sign-in requests from your network are waiting: finish one, or wait 10 minutes and start again from the application',
    )
    expect(await stored()).toBe(before)
    expect(await storedFrom('198.51.100.7')).toBe(MAX_PENDING_PER_SOURCE)
    // Another address is not held back.
    accepted(await sso('198.51.100.8'))

    // IPv6: one /64 is one source, whichever addresses in it send.
    for (let i = 0; i < MAX_PENDING_PER_SOURCE; i++) accepted(await sso(`2001:db8:aa:bb::${(i + 1).toString(16)}`))
    refusedWith(await sso('2001:db8:aa:bb:ffff:ffff:ffff:fffe'), 'TOO_MANY_PENDING_REQUESTS')
    expect(await storedFrom('2001:db8:aa:bb::/64')).toBe(MAX_PENDING_PER_SOURCE)
    accepted(await sso('2001:db8:aa:bc::1'))

    // A person who signs in answers their request: it is no longer pending, and the next one is taken.
    const person = await verifiedPerson(server)
    const blocked = await sso('198.51.100.7', undefined, person.client)
    refusedWith(blocked, 'TOO_MANY_PENDING_REQUESTS')
    const anyPending = (await server.gatehouse.ctx.db.select().from(samlRequest).where(eq(samlRequest.source, '198.51.100.7')))[0]
    const answered = await person.client.get(`/saml/continue/${anyPending?.id}`)
    expect(answered.status).toBe(200)
    accepted(await sso('198.51.100.7'))
  }, 120_000)

  it('expire after 10 minutes: the source may send again; the expired ones are swept within a minute (not kept for an hour)', async () => {
    serverLog.allowWarning(/SAML request refused: (TOO_MANY_PENDING_REQUESTS|REQUEST_NOT_FOUND)/)
    const ip = '203.0.113.9'
    const first = accepted(await sso(ip))
    for (let i = 1; i < MAX_PENDING_PER_SOURCE; i++) accepted(await sso(ip))
    refusedWith(await sso(ip), 'TOO_MANY_PENDING_REQUESTS')
    server.clock.advance(10 * 60_000 - 1)
    refusedWith(await sso(ip), 'TOO_MANY_PENDING_REQUESTS')
    expect(await storedFrom(ip)).toBe(MAX_PENDING_PER_SOURCE)
    server.clock.advance(2)
    // The first request's continue URL is dead; a new request is taken, and the old rows are gone.
    const person = await verifiedPerson(server)
    refusedWith(await person.client.get(first.slice(server.base.length)), 'REQUEST_NOT_FOUND')
    accepted(await sso(ip))
    // A request sweeps at most once a minute (the background job does too, every minute).
    server.clock.advance(60_000)
    accepted(await sso(ip))
    expect(await storedFrom(ip)).toBe(2)
  }, 120_000)
})

describe('pairwise NameID (nameIDFormat persistent)', () => {
  /** Independent of the server's code: HKDF-SHA256 of the secret (salt gatehouse/<purpose>), then HMAC-SHA256 of "userId NUL entityID". */
  const expectedPairwise = (userId: string, entityId: string): string => {
    const key = Buffer.from(hkdfSync('sha256', server.gatehouse.ctx.secret, 'gatehouse/saml-pairwise-nameid', 'hmac-sha256 v1', 32))
    return createHmac('sha256', key).update(`${userId}\u0000${entityId}`).digest('base64url')
  }

  async function nameIdAt(person: { client: HttpClient }, at: TestSp): Promise<{ value: string; format: string | null }> {
    const idpCert = /<ds:X509Certificate>([^<]+)</.exec(await (await fetch(`${server.base}/saml/metadata`)).text())?.[1] as string
    const res = await person.client.get(`/saml/sso?${redirectQuery(authnRequest(at, idp).xml, null)}`)
    const answer = await person.client.get((res.headers.get('location') as string).slice(server.base.length))
    expect(answer.status).toBe(200)
    const nameId = first(verifiedResponse(formFields(answer.text).fields.SAMLResponse as string, idpCert), ASSERTION, 'NameID')
    return { value: nameId.textContent ?? '', format: nameId.getAttribute('Format') }
  }

  it('differs between two SPs for one person, is the same at one SP every time, and is no user id; persistent-shared is the user id', async () => {
    const a = makeSp('pairwise-a')
    const b = makeSp('pairwise-b')
    const shared = makeSp('shared-sp')
    const by = { via: 'cli' as const }
    const ctx = server.gatehouse.ctx
    expect(
      (await createServiceProvider(ctx, { metadataXml: a.metadata({ authnRequestsSigned: false }), nameIdFormat: 'persistent' }, by))
        .nameIdFormat,
    ).toBe('persistent')
    // The persistent URN means pairwise too.
    await createServiceProvider(
      ctx,
      { metadataXml: b.metadata({ authnRequestsSigned: false }), nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent' },
      by,
    )
    await createServiceProvider(
      ctx,
      { metadataXml: shared.metadata({ authnRequestsSigned: false }), nameIdFormat: 'persistent-shared' },
      by,
    )
    expect((await findServiceProviderByRef(ctx, b.entityId))?.nameIdFormat).toBe('persistent')

    const person = await verifiedPerson(server)
    const other = await verifiedPerson(server)
    const atA = await nameIdAt(person, a)
    const atB = await nameIdAt(person, b)
    expect(atA.format).toBe('urn:oasis:names:tc:SAML:2.0:nameid-format:persistent')
    expect(atA.value).toBe(expectedPairwise(person.user.id, a.entityId))
    expect(atB.value).toBe(expectedPairwise(person.user.id, b.entityId))
    expect(atA.value).not.toBe(atB.value)
    expect(atA.value).not.toContain(person.user.id)
    expect((await nameIdAt(person, a)).value).toBe(atA.value)
    expect((await nameIdAt(other, a)).value).not.toBe(atA.value)
    expect(await nameIdAt(person, shared)).toEqual({
      value: person.user.id,
      format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
    })
  }, 120_000)

  it('the upgrade: migration saml_persistent_shared turns the persistent SPs stored before into persistent-shared, and nothing else', async () => {
    const now = new Date(server.clock.now())
    const row = (id: string, nameIdFormat: string) => ({
      id,
      entityId: `https://${id}.example/metadata`,
      name: id,
      metadataXml: makeSp(id).metadata(),
      nameIdFormat,
      allowedGroups: [],
      createdAt: now,
      updatedAt: now,
    })
    const ctx = server.gatehouse.ctx
    await ctx.db
      .insert(samlServiceProvider)
      .values([
        row('old-persistent', 'persistent'),
        row('old-urn', 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent'),
        row('old-email', 'email'),
        row('old-unspecified', 'unspecified'),
      ])
    const root = resolve(import.meta.dirname, '../../..', testEngine === 'postgres' ? 'server/db/pg/migrations' : 'server/db/migrations')
    const file = readdirSync(root).find((f) => f.endsWith('_saml_persistent_shared.sql')) as string
    const text = readFileSync(join(root, file), 'utf8')
    if (testEngine === 'postgres')
      await (ctx.db as unknown as { execute(q: ReturnType<typeof sql>): Promise<unknown> }).execute(sql.raw(text))
    else sqliteOf(ctx).exec(text)
    const formats = Object.fromEntries(
      (await ctx.db.select().from(samlServiceProvider)).filter((r) => r.id.startsWith('old-')).map((r) => [r.id, r.nameIdFormat]),
    )
    expect(formats).toEqual({
      'old-persistent': 'persistent-shared',
      'old-urn': 'persistent-shared',
      'old-email': 'email',
      'old-unspecified': 'unspecified',
    })
  }, 120_000)
})

describe('group names (issue 47 §3: names no one can claim)', () => {
  it('the signed assertion’s groups attribute names a team by its slug, so no team name can carry a separator (`,` `;` space)', async () => {
    // Before the rollover below: the metadata publishes the one signing certificate.
    const idpCert = /<ds:X509Certificate>([^<]+)</.exec(await (await fetch(`${server.base}/saml/metadata`)).text())?.[1] as string
    const person = await verifiedPerson(server, { name: 'Tess Teams' })
    await joinTeamsNamed(person.client, person.user.id, { name: 'Commas', slug: 'commas-saml' }, SEPARATOR_TEAM_NAMES)
    const res = await person.client.get(`/saml/sso?${redirectQuery(authnRequest(sp, idp).xml, null)}`)
    const answer = await person.client.get(accepted(res).slice(server.base.length))
    expect(answer.status).toBe(200)
    const root = verifiedResponse(formFields(answer.text).fields.SAMLResponse as string, idpCert)
    // '!!!' has no letter or digit: no group. Team groups sorted by name (the one group rule, as Remote-Groups).
    const groups = attributesOf(root).groups
    expect(groups).toEqual([
      'user',
      'commas-saml',
      'commas-saml:owner',
      'commas-saml/a-admin',
      'commas-saml/commas',
      'commas-saml/equipe-ete',
      'commas-saml/release-ops',
      'commas-saml/x-admin',
    ])
    expect(groups?.every(noSeparator)).toBe(true)
  })
})

describe('the uid attribute (issue 51 §2: one login name on every face)', () => {
  it('is the login name LDAP and forward auth give (loginNameOf): the username in lower case, else the email', async () => {
    const idpCert = /<ds:X509Certificate>([^<]+)</.exec(await (await fetch(`${server.base}/saml/metadata`)).text())?.[1] as string
    const uidOf = async (person: Awaited<ReturnType<typeof verifiedPerson>>) => {
      const res = await person.client.get(`/saml/sso?${redirectQuery(authnRequest(sp, idp).xml, null)}`)
      const answer = await person.client.get(accepted(res).slice(server.base.length))
      expect(answer.status).toBe(200)
      return attributesOf(verifiedResponse(formFields(answer.text).fields.SAMLResponse as string, idpCert)).uid
    }
    const tag = Date.now().toString(36)
    const named = await verifiedPerson(server, { username: `Uid.${tag}` })
    expect(await uidOf(named)).toEqual([`uid.${tag}`])
    // A username stored with capitals (a better-auth database imported as it was): still lower case, as LDAP's uid.
    await server.gatehouse.ctx.db
      .update(user)
      .set({ username: `Mixed.${tag}` })
      .where(eq(user.id, named.user.id))
    expect(await uidOf(named)).toEqual([`mixed.${tag}`])
    const plain = await verifiedPerson(server)
    expect(await uidOf(plain)).toEqual([plain.email])
  })
})

describe('signing key rollover (saml.keyRolloverDays, the injected clock)', () => {
  const published = async (): Promise<string[]> =>
    [...(await (await fetch(`${server.base}/saml/metadata`)).text()).matchAll(/<ds:X509Certificate>([^<]+)</g)].map((m) => m[1] as string)

  /** A fresh person's Response from the SP; which published certificate its signatures verify with. */
  async function signedWith(certs: string[]): Promise<string> {
    const person = await verifiedPerson(server)
    const res = await person.client.get(`/saml/sso?${redirectQuery(authnRequest(sp, idp).xml, null)}`)
    const answer = await person.client.get((res.headers.get('location') as string).slice(server.base.length))
    const b64 = formFields(answer.text).fields.SAMLResponse as string
    const good = certs.filter((c) => {
      try {
        verifiedResponse(b64, c)
        return true
      } catch {
        return false
      }
    })
    expect(good).toHaveLength(1)
    return good[0] as string
  }

  it('a rotated key is published at once and signs after 7 days; --activate switches at once; a second rotate meanwhile is refused', async () => {
    const ctx = server.gatehouse.ctx
    const by = { via: 'cli' as const }
    const [old] = await published()
    expect(await signedWith([old as string])).toBe(old)
    await rotateCertificate(ctx, {}, by)
    const both = await published()
    expect(both).toHaveLength(2)
    const next = both.find((c) => c !== old) as string
    expect(await signedWith(both)).toBe(old)
    await expect(rotateCertificate(ctx, {}, by)).rejects.toMatchObject({ status: 400, code: 'NEXT_KEY_PENDING' })
    server.clock.advance(7 * 86_400_000 - 1)
    expect(await signedWith(both)).toBe(old)
    server.clock.advance(1)
    expect(await signedWith(both)).toBe(next)
    expect(await published()).toEqual(both)

    // The next rotation, switched to by --activate before its days are over.
    await rotateCertificate(ctx, {}, by)
    const three = await published()
    expect(three).toHaveLength(3)
    const third = three.find((c) => !both.includes(c)) as string
    expect(await signedWith(three)).toBe(next)
    await rotateCertificate(ctx, { activate: true }, by)
    expect(await published()).toEqual(three)
    expect(await signedWith(three)).toBe(third)
  }, 120_000)
})

describe('SP-initiated logout reaches the other SPs', () => {
  it("an SP's LogoutRequest ends the session, then each other SP of it gets a LogoutRequest in turn, then the first SP its LogoutResponse", async () => {
    const { inflateRawSync } = await import('node:zlib')
    const a = makeSp('slo-a')
    const b = makeSp('slo-b')
    const ctx = server.gatehouse.ctx
    for (const s of [a, b]) await createServiceProvider(ctx, { metadataXml: s.metadata({ authnRequestsSigned: false }) }, { via: 'cli' })
    // Every published certificate (the rollover test above leaves several): the Response verifies with one.
    const certs = [...(await (await fetch(`${server.base}/saml/metadata`)).text()).matchAll(/<ds:X509Certificate>([^<]+)</g)].map(
      (m) => m[1] as string,
    )
    const verified = (b64: string) => {
      for (const c of certs)
        try {
          return verifiedResponse(b64, c)
        } catch {}
      throw new Error('the Response verifies with no published certificate')
    }
    const person = await verifiedPerson(server)
    const indexes: Record<string, string> = {}
    for (const s of [a, b]) {
      const res = await person.client.get(`/saml/sso?${redirectQuery(authnRequest(s, idp).xml, null)}`)
      const answer = await person.client.get((res.headers.get('location') as string).slice(server.base.length))
      const root = verified(formFields(answer.text).fields.SAMLResponse as string)
      indexes[s.entityId] = first(root, ASSERTION, 'AuthnStatement').getAttribute('SessionIndex') as string
    }
    const request = logoutRequestXml(a, idp, person.email, indexes[a.entityId] as string)
    const requestId = /ID="([^"]+)"/.exec(request)?.[1] as string
    const out = await person.client.get(`/saml/slo?${redirectQuery(request, a.privateKeyPem, 'back-a')}`)
    expect(out.status).toBe(303)
    expect((await person.client.get('/get-session')).body).toBeNull()
    // B first: a LogoutRequest for its own NameID and SessionIndex.
    const toB = new URL(out.headers.get('location') as string)
    expect(`${toB.origin}${toB.pathname}`).toBe(b.slo)
    const toBXml = inflateRawSync(Buffer.from(toB.searchParams.get('SAMLRequest') as string, 'base64')).toString()
    expect(toBXml).toContain('LogoutRequest')
    expect(toBXml).toContain(`>${indexes[b.entityId]}</samlp:SessionIndex>`)
    expect(toBXml).toContain(`>${person.email}</saml:NameID>`)
    // B answers; then A gets its LogoutResponse, with its RelayState.
    const inResponseTo = /ID="([^"]+)"/.exec(toBXml)?.[1] as string
    const answer = `<samlp:LogoutResponse xmlns:samlp="${PROTOCOL}" xmlns:saml="${ASSERTION}" ID="_r${Date.now()}" Version="2.0" IssueInstant="${new Date(server.clock.now()).toISOString()}" Destination="${idp.slo}" InResponseTo="${inResponseTo}"><saml:Issuer>${b.entityId}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:LogoutResponse>`
    const back = await person.client.get(
      `/saml/slo?${redirectQuery(answer, b.privateKeyPem, toB.searchParams.get('RelayState') as string, 'SAMLResponse')}`,
    )
    expect(back.status).toBe(303)
    const toA = new URL(back.headers.get('location') as string)
    expect(`${toA.origin}${toA.pathname}`).toBe(a.slo)
    expect(toA.searchParams.get('RelayState')).toBe('back-a')
    const response = inflateRawSync(Buffer.from(toA.searchParams.get('SAMLResponse') as string, 'base64')).toString()
    expect(response).toContain('LogoutResponse')
    expect(response).toContain(`InResponseTo="${requestId}"`)
    expect(response).toContain('urn:oasis:names:tc:SAML:2.0:status:Success')
  }, 120_000)
})
