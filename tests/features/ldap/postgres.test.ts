import { Client, InvalidCredentialsError } from 'ldapts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../../helpers/engines.js'
import { uniqueEmail } from '../../helpers/http.js'
import { type Instance, MULTI_PASSWORD, signUpOn, startInstance } from '../../helpers/instances.js'
import { joinTeamsNamed, noSeparator, SEPARATOR_TEAM_NAMES } from '../../helpers/members.js'
import { BASE, ldapsearch, ldapUtilsMissing, parseLdif } from './helpers.js'

/**
 * Two `gatehouse serve` processes on one PostgreSQL, each with its LDAP listener: a change made
 * through one instance's HTTP API or panel (a sign-up, a role, a ban) is what the other's LDAP
 * answers on the next request. Needs `npm run build:server` (dist/server/main.mjs).
 */
const noPostgres = postgresUnavailable()
warnSkipped('LDAP on two instances over PostgreSQL', noPostgres)

describe.skipIf(noPostgres)('LDAP on two instances sharing PostgreSQL', () => {
  let postgres: PostgresServer
  let a: Instance
  let b: Instance
  let ldapA: string
  let ldapB: string

  beforeAll(async () => {
    postgres = await startPostgres()
    const databaseUrl = await postgres.createDatabase('ldap')
    const [portA, portB] = [await freePort(), await freePort()]
    ldapA = `ldap://127.0.0.1:${portA}`
    ldapB = `ldap://127.0.0.1:${portB}`
    const config = (port: number) => ({ rateLimit: { enabled: false }, ldap: { enabled: true, address: `127.0.0.1:${port}` } })
    a = await startInstance('ldap-a', { databaseUrl, config: config(portA) })
    b = await startInstance('ldap-b', { databaseUrl, config: config(portB) })
  }, 120_000)
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await postgres?.stop()
  })

  it('a sign-up, a role change and a ban on instance A are what instance B answers next', async () => {
    const admin = await signUpOn(a, uniqueEmail('ldapadmin'), { verified: true })
    const member = await signUpOn(a, uniqueEmail('ldapmember'), { verified: true })
    const dn = (email: string) => `uid=${email},ou=people,${BASE}`
    // Both listeners up; the member binds on B at once.
    const onB = new Client({ url: ldapB })
    await onB.bind(dn(member.email), MULTI_PASSWORD)
    expect(await onB.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: `dn:${dn(member.email)}` })

    const setRole = await a.panelCall('users.setRole', { userId: admin.id, role: 'admin' })
    expect(setRole.status).toBe(200)
    const adminOnB = new Client({ url: ldapB })
    await adminOnB.bind(dn(admin.email), MULTI_PASSWORD)
    const people = async (c: Client) =>
      (await c.search(`ou=people,${BASE}`, { scope: 'one', attributes: ['mail'] })).searchEntries.map((e) => e.mail).sort()
    expect(await people(adminOnB)).toEqual([admin.email, member.email].sort())

    const ban = await a.panelCall('users.ban', { userId: member.id })
    expect(ban.status).toBe(200)
    expect(await people(adminOnB)).toEqual([admin.email])
    // The member's bound connection on B sees nothing below the base at its next operation.
    expect((await onB.search(BASE, { scope: 'sub', attributes: ['1.1'] })).searchEntries.map((e) => e.dn)).toEqual([BASE])
    await expect(new Client({ url: ldapA }).bind(dn(member.email), MULTI_PASSWORD)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await onB.unbind()
    await adminOnB.unbind()
  }, 60_000)

  it('a change through A’s HTTP API is what the very next search on B’s warm bound connection answers; a revoked app password the next bind', async () => {
    const admin = await signUpOn(a, uniqueEmail('ldapwarm'), { verified: true })
    const member = await signUpOn(a, uniqueEmail('ldapwarmmember'), { verified: true })
    const dn = (email: string) => `uid=${email},ou=people,${BASE}`
    expect((await a.panelCall('users.setRole', { userId: admin.id, role: 'admin' })).status).toBe(200)
    const onB = new Client({ url: ldapB })
    await onB.bind(dn(admin.email), MULTI_PASSWORD)
    const cn = async () =>
      (await onB.search(`ou=people,${BASE}`, { scope: 'one', filter: `(uid=${member.email})`, attributes: ['cn'] })).searchEntries.map(
        (e) => e.cn,
      )
    // Warm: the same search twice on B.
    expect(await cn()).toEqual(['Multi'])
    expect(await cn()).toEqual(['Multi'])
    const rename = await a.client(member.cookie).post('/update-user', { name: 'Renamed On A' })
    expect(rename.status).toBe(200)
    expect(await cn()).toEqual(['Renamed On A'])

    // An app password bound (and remembered) on B, revoked through A: B refuses the next bind.
    const made = await a.client(member.cookie).post<{ id: string; password: string }>('/app-password/create', { name: 'NAS' })
    expect(made.status).toBe(200)
    const app = new Client({ url: ldapB })
    for (let i = 0; i < 3; i++) await app.bind(dn(member.email), made.body.password)
    expect((await a.client(member.cookie).post('/app-password/revoke', { id: made.body.id })).status).toBe(200)
    await expect(app.bind(dn(member.email), made.body.password)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await app.unbind()
    await onB.unbind()
  }, 60_000)
  it.skipIf(!!ldapUtilsMissing)(
    'team groups read from PostgreSQL are the slugs of their names: memberOf on B (ldapsearch) after teams made on A',
    async () => {
      const member = await signUpOn(a, uniqueEmail('ldapteams'), { verified: true })
      await joinTeamsNamed(a.client(member.cookie), member.id, { name: 'Commas', slug: 'commas-pg' }, SEPARATOR_TEAM_NAMES)
      // Characters JSON escapes, and its brackets: each person's group sources are read as one JSON text (store.ts).
      await joinTeamsNamed(a.client(member.cookie), member.id, { name: 'Quotes', slug: 'quotes-pg' }, [
        'Say "hi"',
        'back\\slash',
        '[x], {y}',
      ])
      const dn = `uid=${member.email},ou=people,${BASE}`
      const found = await ldapsearch(
        { url: ldapB },
        { bindDN: dn, password: MULTI_PASSWORD, base: dn, scope: 'base', filter: '(objectClass=*)', attributes: ['memberOf'] },
      )
      expect(found.code).toBe(0)
      // '!!!' has no letter or digit: no group. Team groups sorted by name (the one group rule, as Remote-Groups).
      const names = [
        'user',
        'commas-pg',
        'commas-pg:owner',
        'quotes-pg',
        'quotes-pg:owner',
        'commas-pg/a-admin',
        'commas-pg/commas',
        'commas-pg/equipe-ete',
        'commas-pg/release-ops',
        'commas-pg/x-admin',
        'quotes-pg/back-slash',
        'quotes-pg/quotes',
        'quotes-pg/say-hi',
        'quotes-pg/x-y',
      ]
      expect(names.every(noSeparator)).toBe(true)
      expect(parseLdif(found.stdout)).toEqual([
        { dn, attributes: [{ name: 'memberOf', values: names.map((name) => `cn=${name},ou=groups,${BASE}`) }] },
      ])
    },
    60_000,
  )
})
