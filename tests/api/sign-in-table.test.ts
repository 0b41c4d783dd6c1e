import { Client, InvalidCredentialsError } from 'ldapts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, session } from '../../server/db/schema.js'
import { findUserById } from '../../server/core/user-store.js'
import { admitToFace, SIGN_IN_TABLE, stepsOf } from '../../server/core/sign-in-table.js'
import { metricsListening } from '../../server/features/metrics/index.js'
import { HttpClient, signUp } from '../helpers/http.js'
import { type Scrape, scrape } from '../helpers/metrics.js'
import { BASE, type LdapServer, PASSWORD, person, startLdapServer } from '../features/ldap/helpers.js'

/**
 * The house's one sign-in table (server/core/sign-in-table.ts, docs/ARCHITECTURE.md "Sign-in"):
 * each row runs for exactly the outlets it names. An LDAP bind (the `bind` outlet) is admitted,
 * committed with its audit event and counted in the sign-in metric like a password sign-in over
 * HTTP (the `cookie` outlet), and it also vouches (the faces' admission rule), which a cookie
 * sign-in does not; a face's question (`face`) asks the rule and writes nothing. Both engines.
 */

let server: LdapServer
let metricsURL: string

beforeAll(async () => {
  server = await startLdapServer({ config: { metrics: { enabled: true, address: '127.0.0.1:0' } } })
  const at = await metricsListening(server.gatehouse.ctx)
  if (!at) throw new Error('the metrics listener did not start')
  metricsURL = `http://127.0.0.1:${at.port}/metrics`
}, 60_000)
afterAll(() => server?.close())

const signIns = (s: Scrape, method: string, outcome: string) => s.value('gatehouse_sign_ins_total', { method, outcome })
const auditSince = async (count: number) => (await server.gatehouse.ctx.db.select().from(auditEvent)).slice(count)
const auditCount = async () => (await server.gatehouse.ctx.db.select().from(auditEvent)).length
const sessionCount = async () => (await server.gatehouse.ctx.db.select().from(session)).length

async function bind(dn: string, password: string): Promise<'ok' | 'invalid'> {
  const c = new Client({ url: server.url, timeout: 5_000, connectTimeout: 5_000 })
  try {
    await c.bind(dn, password)
    await c.unbind()
    return 'ok'
  } catch (error) {
    if (error instanceof InvalidCredentialsError) return 'invalid'
    throw error
  }
}

describe('the sign-in table', () => {
  it('names, per outlet, the rows it runs, in one order', () => {
    expect(stepsOf('cookie')).toEqual(['admit', 'second-factor', 'commit', 'answer', 'signed-in', 'metric'])
    expect(stepsOf('token')).toEqual(['admit', 'commit', 'metric'])
    expect(stepsOf('bind')).toEqual(['admit', 'vouch', 'commit', 'metric'])
    expect(stepsOf('face')).toEqual(['vouch'])
    // Every row runs for some outlet, and each says what it does.
    for (const row of SIGN_IN_TABLE) expect(row.outlets.length * row.does.length).toBeGreaterThan(0)
  })

  it('an LDAP bind is admitted, audited and counted like a password sign-in, without a session', async () => {
    const ada = await person(server, 'ada_table', 'Ada Table')
    const sessions = await sessionCount()
    const before = await scrape(metricsURL)
    const audited = await auditCount()

    expect(await bind(ada.dn, PASSWORD)).toBe('ok')
    expect(await bind(ada.dn, 'not the password')).toBe('invalid')
    const web = new HttpClient(server.base)
    expect((await web.post('/sign-in/email', { email: ada.email, password: PASSWORD })).status).toBe(200)

    const after = await scrape(metricsURL)
    expect(signIns(after, 'ldap', 'success') - signIns(before, 'ldap', 'success')).toBe(1)
    expect(signIns(after, 'ldap', 'wrong-credentials') - signIns(before, 'ldap', 'wrong-credentials')).toBe(1)
    expect(signIns(after, 'email', 'success') - signIns(before, 'email', 'success')).toBe(1)
    const events = (await auditSince(audited)).filter((e) => e.type === 'user.sign-in')
    const ofBind = events.filter((e) => (e.detail as { method?: string }).method === 'ldap')
    const ofWeb = events.filter((e) => (e.detail as { method?: string }).method === 'email')
    // The same event for the same success, by the same person; the bind names no session (it made none).
    expect(ofBind.map((e) => [e.outcome, e.actorUserId ?? e.targetUserId])).toEqual([
      ['success', ada.id],
      ['failure', ada.id],
    ])
    expect(ofWeb.map((e) => [e.outcome, e.actorUserId])).toEqual([['success', ada.id]])
    expect(ofBind[0]?.target).toBeNull()
    expect(ofWeb[0]?.target).toEqual(expect.any(String))
    // One session: the web's.
    expect(await sessionCount()).toBe(sessions + 1)
  })

  it('a bind vouches: an unverified person is refused there (audited with the reason, counted refused) and not over HTTP', async () => {
    // identity.requireVerifiedEmail is on by default; better-auth's requireEmailVerification is off.
    const up = await signUp(server.base, { name: 'Uma Unverified' })
    const dn = `uid=${up.email},ou=people,${BASE}`
    const before = await scrape(metricsURL)
    const audited = await auditCount()

    expect(await bind(dn, PASSWORD)).toBe('invalid')
    const web = new HttpClient(server.base)
    expect((await web.post('/sign-in/email', { email: up.email, password: PASSWORD })).status).toBe(200)

    const after = await scrape(metricsURL)
    expect(signIns(after, 'ldap', 'refused') - signIns(before, 'ldap', 'refused')).toBe(1)
    expect(signIns(after, 'ldap', 'success') - signIns(before, 'ldap', 'success')).toBe(0)
    expect(signIns(after, 'email', 'success') - signIns(before, 'email', 'success')).toBe(1)
    const refusal = (await auditSince(audited)).find((e) => e.type === 'user.sign-in' && e.outcome === 'failure')
    expect(refusal).toMatchObject({ targetUserId: up.user.id, detail: { method: 'ldap', reason: 'EMAIL_NOT_VERIFIED' } })
  })

  it("a face's question asks the admission rule and writes nothing: no audit event, no sign-in counted", async () => {
    const verified = await person(server, 'vera_table', 'Vera Table')
    const unverified = await signUp(server.base, { name: 'Ursula Unverified' })
    const before = await scrape(metricsURL)
    const audited = await auditCount()
    const ctx = server.gatehouse.ctx
    const row = async (id: string) => {
      const found = await findUserById(ctx, id)
      if (!found) throw new Error(`no user ${id}`)
      return found
    }
    for (const face of ['saml', 'oidc', 'forward-auth', 'ldap'] as const) {
      expect(await admitToFace(ctx, { user: await row(verified.id) }, face)).toBeNull()
      expect(await admitToFace(ctx, { user: await row(unverified.user.id) }, face)).toBe('EMAIL_NOT_VERIFIED')
    }
    const after = await scrape(metricsURL)
    expect(after.value('gatehouse_sign_ins_total') - before.value('gatehouse_sign_ins_total')).toBe(0)
    expect(await auditSince(audited)).toEqual([])
  })
})
