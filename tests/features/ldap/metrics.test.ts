import { Client, InvalidCredentialsError, NoSuchObjectError } from 'ldapts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent } from '../../../server/db/schema.js'
import { banUser, systemActor } from '../../../server/features/admin/index.js'
import { metricsListening } from '../../../server/features/metrics/index.js'
import { createPanelService } from '../../../server/panel/service.js'
import { type Scrape, scrape } from '../../helpers/metrics.js'
import { silentLogger } from '../../helpers/server.js'
import { BASE, type LdapServer, PASSWORD, type Person, client, person, startLdapServer } from './helpers.js'

/**
 * docs/LDAP.md "Metrics and audit": binds are `gatehouse_sign_ins_total{method="ldap",outcome}`,
 * searches `gatehouse_ldap_searches_total`; binds are audited like sign-ins, searches are not.
 * Real ldapts binds and searches, then a scrape of the metrics listener.
 */

let server: LdapServer
let metricsURL: string
let alice: Person
let bob: Person
beforeAll(async () => {
  server = await startLdapServer({ config: { metrics: { enabled: true, address: '127.0.0.1:0' } } })
  const at = await metricsListening(server.gatehouse.ctx)
  if (!at) throw new Error('the metrics listener did not start')
  metricsURL = `http://127.0.0.1:${at.port}/metrics`
  alice = await person(server, 'alice', 'Alice Liddell', 'admin')
  bob = await person(server, 'bob', 'Bob Builder')
})
afterAll(() => server?.close())

const auditRows = async () => (await server.gatehouse.ctx.db.select().from(auditEvent)).length
const ldapBinds = (s: Scrape, outcome?: string) => s.value('gatehouse_sign_ins_total', { method: 'ldap', ...(outcome ? { outcome } : {}) })
const searches = (s: Scrape) => s.value('gatehouse_ldap_searches_total')

describe('LDAP metrics and audit', () => {
  it('counts binds by result and searches exactly; audits each bind and no search', async () => {
    const carol = await person(server, 'carol', 'Carol Banned')
    await banUser(server.gatehouse.ctx, systemActor('cli'), { userId: carol.id }, null)
    const before = await scrape(metricsURL)
    const auditBefore = await auditRows()

    // Binds: 2 good, 2 wrong credentials (a wrong password, an unknown uid), 1 banned, 1 anonymous (no sign-in).
    const c = await client(server, alice.dn)
    const d = await client(server, bob.dn)
    await expect(new Client({ url: server.url }).bind(alice.dn, 'not the password')).rejects.toBeInstanceOf(InvalidCredentialsError)
    await expect(new Client({ url: server.url }).bind(`uid=nobody,ou=people,${BASE}`, PASSWORD)).rejects.toBeInstanceOf(
      InvalidCredentialsError,
    )
    await expect(new Client({ url: server.url }).bind(carol.dn, PASSWORD)).rejects.toBeInstanceOf(InvalidCredentialsError)
    const anonymous = new Client({ url: server.url })
    await anonymous.bind('', '')
    const afterBinds = await scrape(metricsURL)
    const auditAfterBinds = await auditRows()

    // Searches: 4 answered (one of them noSuchObject), on three connections; carol, banned, is absent.
    expect((await c.search(`ou=people,${BASE}`, { scope: 'one', attributes: ['uid'] })).searchEntries).toHaveLength(2)
    expect((await c.search(BASE, { scope: 'sub', filter: '(uid=bob)' })).searchEntries).toHaveLength(1)
    await expect(d.search(`uid=alice,ou=people,${BASE}`, { scope: 'base' })).rejects.toBeInstanceOf(NoSuchObjectError)
    expect((await anonymous.search('', { scope: 'base', attributes: ['namingContexts'] })).searchEntries).toHaveLength(1)
    const after = await scrape(metricsURL)
    for (const open of [c, d, anonymous]) await open.unbind()

    const delta = (s: Scrape, from: Scrape, f: (x: Scrape) => number) => f(s) - f(from)
    expect(delta(afterBinds, before, (s) => ldapBinds(s, 'success'))).toBe(2)
    expect(delta(afterBinds, before, (s) => ldapBinds(s, 'wrong-credentials'))).toBe(2)
    expect(delta(afterBinds, before, (s) => ldapBinds(s, 'banned'))).toBe(1)
    expect(delta(afterBinds, before, (s) => ldapBinds(s))).toBe(5)
    expect(delta(afterBinds, before, searches)).toBe(0)
    expect(delta(after, afterBinds, searches)).toBe(4)
    expect(delta(after, afterBinds, (s) => ldapBinds(s))).toBe(0)
    // No other method moved: an LDAP bind is no email sign-in.
    expect(delta(after, before, (s) => s.value('gatehouse_sign_ins_total'))).toBe(5)

    // The audit: one event per bind that names someone (the anonymous bind is no sign-in), none per search.
    const events = (await server.gatehouse.ctx.db.select().from(auditEvent)).slice(auditBefore)
    const signIns = events.filter((e) => e.type === 'user.sign-in')
    expect(signIns.map((e) => e.outcome).sort()).toEqual(['failure', 'failure', 'failure', 'success', 'success'])
    for (const event of signIns) expect(event.detail).toMatchObject({ method: 'ldap' })
    expect(auditAfterBinds - auditBefore).toBe(events.length)
    expect(await auditRows()).toBe(auditAfterBinds)
  })

  it('the panel’s bind-and-search test counts its bind as an LDAP bind and its search as no LDAP search', async () => {
    const service = createPanelService({
      gatehouse: server.gatehouse,
      apiURL: () => server.base,
      mode: 'browser',
      version: 'test',
      startedAt: Date.now(),
      logger: silentLogger,
    })
    const before = await scrape(metricsURL)
    const result = await service.dispatch('ldap.test', {
      bindDN: alice.dn,
      password: PASSWORD,
      base: BASE,
      scope: 'sub',
      filter: '(uid=*)',
    })
    expect(result).toMatchObject({ ok: true, data: { bind: { code: 0 }, search: { code: 0 } } })
    const after = await scrape(metricsURL)
    expect(ldapBinds(after, 'success') - ldapBinds(before, 'success')).toBe(1)
    expect(searches(after) - searches(before)).toBe(0)
  })
})
