import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PanelCaller } from '../../../server/core/panel-caller.js'
import { auditEvent, user } from '../../../server/db/schema.js'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { warnSkipped } from '../../helpers/engines.js'
import { silentLogger } from '../../helpers/server.js'
import {
  BASE,
  type LdapServer,
  ldapsearch,
  ldapUtilsMissing,
  PASSWORD,
  type Person,
  parseLdif,
  person,
  startLdapServer,
} from './helpers.js'

/**
 * The panel's "test a bind and a filter" (`ldap.test`, server/features/ldap/probe.ts) answers what
 * OpenLDAP's `ldapsearch` gets from the listener for the same bind and search; its bind counts
 * towards lockout and is audited as the admin's, without the password; a bad filter is refused
 * before any bind; a view-only admin may not run it.
 */

let server: LdapServer
let service: PanelService
let ada: PanelCaller
let reader: Person
let alice: Person
let bob: Person
beforeAll(async () => {
  server = await startLdapServer({
    config: {
      admin: { roles: { 'ldap-reader': { user: [] } } },
      security: { accountLockout: { enabled: true, maxFailures: 3, window: 900, lockDuration: 600 } },
    },
    ldap: { searchRoles: ['admin', 'ldap-reader'] },
  })
  reader = await person(server, 'svcreader', 'Service Reader', 'ldap-reader')
  alice = await person(server, 'alice', 'Alice Liddell', 'admin')
  bob = await person(server, 'bob', 'Bob Builder')
  const admin = await person(server, 'ada', 'Ada Admin', 'admin')
  const row = (await server.gatehouse.ctx.db.select().from(user).where(eq(user.id, admin.id)))[0]
  if (!row) throw new Error('no admin row')
  ada = { kind: 'admin', user: row, access: 'full', meta: { ipAddress: '127.0.0.9', userAgent: 'panel-test' } }
  service = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
})
afterAll(() => server?.close())

type Search = {
  bindDN: string
  password: string
  base: string
  scope: 'base' | 'one' | 'sub'
  filter: string
  attributes?: string[]
  sizeLimit?: number
}

async function panelTest(search: Search, caller: PanelCaller = ada) {
  const result = await service.dispatch('ldap.test', search, caller)
  if (!result.ok) throw new Error(`ldap.test: ${result.error.code} ${result.error.message}`)
  return result.data as {
    bind: { code: number; result: string; boundAs: string | null }
    search: { code: number; result: string; entries: { dn: string; attributes: { name: string; values: string[] }[] }[] } | null
  }
}

describe('ldap.test answers what ldapsearch gets', () => {
  warnSkipped('LDAP: the panel test against ldapsearch (ldap-utils)', ldapUtilsMissing)
  // Each case: its name, the search, and how many entries and which result code it comes to (so no case passes empty).
  const cases: [string, () => Search, number, number][] = [
    [
      'the service user, every person',
      () => ({ bindDN: reader.dn, password: PASSWORD, base: BASE, scope: 'sub', filter: '(objectClass=person)' }),
      4,
      0,
    ],
    [
      'the service user, a login filter with chosen attributes',
      () => ({
        bindDN: reader.dn,
        password: PASSWORD,
        base: `ou=people,${BASE}`,
        scope: 'sub',
        filter: '(&(objectClass=person)(|(uid=ALICE)(mail=alice)))',
        attributes: ['uid', 'mail', 'memberOf', 'entryUUID'],
      }),
      1,
      0,
    ],
    [
      'a plain user sees their own entry and groups',
      () => ({ bindDN: bob.dn, password: PASSWORD, base: BASE, scope: 'sub', filter: '(|(uid=*)(cn=*))', attributes: ['*', '+'] }),
      2,
      0,
    ],
    [
      'groups by substring',
      () => ({ bindDN: alice.dn, password: PASSWORD, base: `ou=groups,${BASE}`, scope: 'one', filter: '(cn=ad*)' }),
      1,
      0,
    ],
    [
      'a size limit',
      () => ({
        bindDN: reader.dn,
        password: PASSWORD,
        base: `ou=people,${BASE}`,
        scope: 'one',
        filter: '(uid=*)',
        attributes: ['uid'],
        sizeLimit: 2,
      }),
      2,
      4,
    ],
    ['anonymous', () => ({ bindDN: '', password: '', base: BASE, scope: 'sub', filter: '(objectClass=*)' }), 1, 0],
    [
      'no such base',
      () => ({ bindDN: reader.dn, password: PASSWORD, base: `ou=nowhere,${BASE}`, scope: 'sub', filter: '(objectClass=*)' }),
      0,
      32,
    ],
  ]
  for (const [name, make, count, code] of cases) {
    it.skipIf(!!ldapUtilsMissing)(name, async () => {
      const search = make()
      const [box, cli] = [await panelTest(search), await ldapsearch(server, search)]
      expect(box.bind).toMatchObject({ code: 0, result: 'success' })
      expect(box.search?.code, cli.stderr).toBe(cli.code)
      expect(box.search?.entries).toEqual(parseLdif(cli.stdout))
      expect([box.search?.entries.length, box.search?.code]).toEqual([count, code])
    })
  }

  it.skipIf(!!ldapUtilsMissing)('a wrong password: invalidCredentials (49), as ldapsearch exits, and no search', async () => {
    const search: Search = { bindDN: alice.dn, password: 'not the password', base: BASE, scope: 'sub', filter: '(uid=*)' }
    const box = await panelTest(search)
    const cli = await ldapsearch(server, search)
    expect(box).toEqual({ bind: { code: 49, result: 'invalidCredentials', boundAs: null }, search: null })
    expect(cli.code).toBe(49)
    expect(cli.stderr).toContain('Invalid credentials (49)')
    // An empty password with a DN: unwillingToPerform, as the listener answers.
    expect((await panelTest({ ...search, password: '' })).bind).toEqual({ code: 53, result: 'unwillingToPerform', boundAs: null })
    expect((await panelTest({ ...search, bindDN: `UID=Alice,OU=People,${BASE.toUpperCase()}`, password: PASSWORD })).bind).toEqual({
      code: 0,
      result: 'success',
      boundAs: alice.dn,
    })
  })
})

describe('ldap.test as a panel action', () => {
  it('counts towards the lockout like an LDAP bind and is audited as the admin’s, never with the password', async () => {
    const carol = await person(server, 'carol', 'Carol Ann')
    const secret = 'panel-guess-1234'
    for (let i = 0; i < 3; i++) {
      const box = await panelTest({ bindDN: carol.dn, password: `${secret}${i}`, base: BASE, scope: 'base', filter: '(objectClass=*)' })
      expect(box.bind.code).toBe(49)
    }
    // Three wrong passwords from the panel locked carol: her right password is refused now, over LDAP and in the box.
    expect(
      (await panelTest({ bindDN: carol.dn, password: PASSWORD, base: BASE, scope: 'base', filter: '(objectClass=*)' })).bind.code,
    ).toBe(49)
    const events = await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.targetUserId, carol.id))
    const failures = events.filter((e) => e.type === 'user.sign-in' && e.outcome === 'failure')
    expect(failures.length).toBeGreaterThanOrEqual(3)
    for (const event of failures) {
      expect(event.actorUserId).toBe(ada.kind === 'admin' ? ada.user.id : null)
      expect(event.detail).toMatchObject({ method: 'ldap', via: 'ldap' })
      expect(event.ipAddress).toBe('127.0.0.9')
    }
    expect(JSON.stringify(events)).not.toContain(secret)
    if (!ldapUtilsMissing) {
      const cli = await ldapsearch(server, { bindDN: carol.dn, password: PASSWORD, base: BASE, scope: 'base', filter: '(objectClass=*)' })
      expect(cli.code).toBe(49)
    }
  })

  it('refuses a filter that is not one before binding, naming the filter field', async () => {
    for (const filter of ['(&(uid=alice)', '((uid=alice)', 'uid=alice)']) {
      const before = await server.gatehouse.ctx.db.select().from(auditEvent)
      const result = await service.dispatch('ldap.test', { bindDN: alice.dn, password: 'x', base: BASE, scope: 'sub', filter }, ada)
      expect(result).toMatchObject({ ok: false, error: { status: 400, code: 'INVALID_FILTER', field: 'filter' } })
      if (!result.ok) expect(result.error.message).toContain('(uid=alice)')
      expect(await server.gatehouse.ctx.db.select().from(auditEvent)).toHaveLength(before.length)
    }
  })

  it('is refused to a view-only admin', async () => {
    const limited: PanelCaller = { ...(ada as Extract<PanelCaller, { kind: 'admin' }>), access: 'limited' }
    const result = await service.dispatch(
      'ldap.test',
      { bindDN: alice.dn, password: PASSWORD, base: BASE, scope: 'sub', filter: '(uid=*)' },
      limited,
    )
    expect(result).toMatchObject({ ok: false, error: { status: 403, code: 'PANEL_FORBIDDEN' } })
  })
})
