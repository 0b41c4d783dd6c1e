import {
  AuthMethodNotSupportedError,
  BusyError,
  Client,
  Control,
  InvalidCredentialsError,
  InvalidDNSyntaxError,
  NoSuchObjectError,
  ProtocolError,
  UnavailableCriticalExtensionError,
  UnwillingToPerformError,
} from 'ldapts'
import { passwordHashQueue } from '../../../server/crypto/hash-queue.js'
import { serverLog } from '../../helpers/server.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BASE,
  PASSWORD,
  type LdapServer,
  type Person,
  client,
  ldapsearch,
  ldapUtilsMissing,
  parseLdif,
  person,
  run,
  startLdapServer,
} from './helpers.js'
import { warnSkipped } from '../../helpers/engines.js'
import { signUp } from '../../helpers/http.js'
import { joinTeamsNamed, markVerified, noSeparator, SEPARATOR_TEAM_NAMES, verifiedSignUp } from '../../helpers/members.js'

let server: LdapServer
let reader: Person
let alice: Person
let bob: Person
beforeAll(async () => {
  server = await startLdapServer({
    config: { admin: { roles: { 'ldap-reader': { user: [] } } } },
    ldap: { searchRoles: ['admin', 'ldap-reader'] },
  })
  reader = await person(server, 'svcreader', 'Service Reader', 'ldap-reader')
  alice = await person(server, 'alice', 'Alice Liddell')
  bob = await person(server, 'bob', 'Bob')
})
afterAll(() => server?.close())

describe('binds', () => {
  it('binds with the password of a people DN, whoami answers the normalized DN', async () => {
    const c = await client(server, `UID=Alice,ou=People,${BASE}`)
    expect(await c.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: `dn:uid=alice,ou=people,${BASE}` })
    await c.unbind()
  })
  it('refuses a wrong password, an unknown uid and a DN outside people with 49; an empty password with 53', async () => {
    const c = new Client({ url: server.url })
    await expect(c.bind(alice.dn, 'wrong password')).rejects.toBeInstanceOf(InvalidCredentialsError)
    await expect(c.bind(`uid=nobody,ou=people,${BASE}`, PASSWORD)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await expect(c.bind(`cn=alice,${BASE}`, PASSWORD)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await expect(c.bind(alice.dn, '')).rejects.toBeInstanceOf(UnwillingToPerformError)
    await c.unbind()
  })
  it('a DN with a multi-valued RDN names nobody, and an unescaped + is no DN: neither binds as the first pair', async () => {
    // Before, `uid=alice+cn=x` (and `uid=alice+x`) bound as alice and found her entry, where OpenLDAP names no such entry.
    const c = new Client({ url: server.url })
    await expect(c.bind(`uid=alice+cn=x,ou=people,${BASE}`, PASSWORD)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await expect(c.bind(`uid=alice+x,ou=people,${BASE}`, PASSWORD)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await expect(c.bind(`uid=alice\\2b+cn=x,ou=people,${BASE}`, PASSWORD)).rejects.toBeInstanceOf(InvalidCredentialsError)
    await c.bind(reader.dn, PASSWORD)
    await expect(c.search(`uid=alice+cn=x,ou=people,${BASE}`, { scope: 'base' })).rejects.toBeInstanceOf(NoSuchObjectError)
    await expect(c.search(`uid=alice+x,ou=people,${BASE}`, { scope: 'base' })).rejects.toBeInstanceOf(InvalidDNSyntaxError)
    await expect(c.compare(`uid=alice+cn=x,ou=people,${BASE}`, 'uid', 'alice')).rejects.toBeInstanceOf(NoSuchObjectError)
    // The DN itself, spelled with spaces and in another case, still names her.
    expect((await c.search(` UID = Alice , ou=people,${BASE}`, { scope: 'base', attributes: ['uid'] })).searchEntries).toHaveLength(1)
    await c.unbind()
  })
  it('answers busy (51) to a bind the full password-hash queue cannot take, and keeps the connection', async () => {
    // Before, the queue's refusal closed the connection and logged an error for each bind.
    const saved = passwordHashQueue.maxPending
    passwordHashQueue.maxPending = 0
    const clients = Array.from({ length: 8 }, () => new Client({ url: server.url, timeout: 60_000 }))
    try {
      const outcomes = await Promise.all(clients.map((c, i) => c.bind(`uid=nobody${i},ou=people,${BASE}`, PASSWORD).catch((e: Error) => e)))
      expect(outcomes.every((e) => e instanceof InvalidCredentialsError || e instanceof BusyError)).toBe(true)
      expect(outcomes.some((e) => e instanceof BusyError)).toBe(true)
    } finally {
      passwordHashQueue.maxPending = saved
    }
    // Each connection is still open and usable.
    for (const c of clients) {
      await c.bind(alice.dn, PASSWORD)
      await c.unbind()
    }
    expect(serverLog.entries.filter((e) => e.level === 'error')).toEqual([])
  })
  it('anonymous binds but finds nothing below the base', async () => {
    const c = new Client({ url: server.url })
    await c.bind('', '')
    const base = await c.search(BASE, { scope: 'base' })
    expect(base.searchEntries.map((e) => e.dn)).toEqual([BASE])
    const sub = await c.search(BASE, { scope: 'sub', filter: '(objectClass=*)' })
    expect(sub.searchEntries.map((e) => e.dn)).toEqual([BASE])
    await expect(c.search(`ou=people,${BASE}`, { scope: 'one' })).rejects.toBeInstanceOf(NoSuchObjectError)
    await c.unbind()
  })
})

describe('search', () => {
  it('a service user sees every person with the contract attributes', async () => {
    const c = await client(server, reader.dn)
    const { searchEntries } = await c.search(`ou=people,${BASE}`, { scope: 'one', filter: '(uid=alice)', attributes: ['*', '+'] })
    expect(searchEntries).toHaveLength(1)
    const entry = searchEntries[0] as Record<string, unknown>
    expect(entry).toMatchObject({
      dn: alice.dn,
      objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson'],
      uid: 'alice',
      cn: 'Alice Liddell',
      displayName: 'Alice Liddell',
      sn: 'Liddell',
      givenName: 'Alice',
      mail: alice.email,
      memberOf: `cn=user,ou=groups,${BASE}`,
    })
    expect(entry.entryUUID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(entry.createTimestamp).toMatch(/^\d{14}Z$/)
    await c.unbind()
  })
  it('evaluates every filter kind, attribute names and uid/mail/cn/objectClass values case-insensitively', async () => {
    const c = await client(server, reader.dn)
    const uids = async (filter: string) =>
      (await c.search(`ou=people,${BASE}`, { scope: 'sub', filter, attributes: ['uid'] })).searchEntries.map((e) => e.uid).sort()
    expect(await uids('(UID=ALICE)')).toEqual(['alice'])
    expect(await uids(`(MAIL=${alice.email.toUpperCase()})`)).toEqual(['alice'])
    expect(await uids('(cn=alice LIDDELL)')).toEqual(['alice'])
    expect(await uids('(&(objectClass=INETORGPERSON)(|(uid=alice)(uid=bob)))')).toEqual(['alice', 'bob'])
    expect(await uids('(&(objectClass=person)(!(uid=alice)))')).toEqual(['bob', 'svcreader'])
    expect(await uids('(cn=*lid*)')).toEqual(['alice'])
    expect(await uids('(cn=Al*ce*ll)')).toEqual(['alice'])
    expect(await uids('(uid=*b)')).toEqual(['bob'])
    expect(await uids('(givenName=*)')).toEqual(['alice', 'svcreader'])
    expect(await uids('(createTimestamp>=20000101000000Z)')).toEqual(['alice', 'bob', 'svcreader'])
    expect(await uids('(createTimestamp<=20000101000000Z)')).toEqual([])
    expect(await uids('(memberOf=CN=user,OU=groups,DC=gatehouse,DC=lan)')).toEqual(['alice', 'bob'])
    await c.unbind()
  })
  it('lists groups with both object classes and their members', async () => {
    const c = await client(server, reader.dn)
    const { searchEntries } = await c.search(`ou=groups,${BASE}`, { scope: 'one', filter: '(objectClass=groupOfUniqueNames)' })
    const user = searchEntries.find((e) => e.cn === 'user') as Record<string, unknown>
    expect(user.objectClass).toEqual(['top', 'groupOfNames', 'groupOfUniqueNames'])
    expect([...(user.member as string[])].sort()).toEqual([alice.dn, bob.dn].sort())
    expect(user.uniqueMember).toEqual(user.member)
    await c.unbind()
  })
  it('sizeLimit answers sizeLimitExceeded after that many entries; paging walks every entry', async () => {
    const c = await client(server, reader.dn)
    // ldapts hands back the entries of a sizeLimitExceeded answer (ldapsearch's exit code 4 is checked below).
    expect((await c.search(`ou=people,${BASE}`, { scope: 'one', sizeLimit: 1 })).searchEntries).toHaveLength(1)
    const paged = await c.search(`ou=people,${BASE}`, { scope: 'one', paged: { pageSize: 1 }, attributes: ['uid'] })
    expect(paged.searchEntries.map((e) => e.uid).sort()).toEqual(['alice', 'bob', 'svcreader'])
    await c.unbind()
  })
  it('a plain user sees only their own entry and their groups', async () => {
    const c = await client(server, bob.dn)
    const all = await c.search(BASE, { scope: 'sub', filter: '(objectClass=*)', attributes: ['1.1'] })
    expect(all.searchEntries.map((e) => e.dn)).toEqual([
      BASE,
      `ou=people,${BASE}`,
      bob.dn,
      `ou=groups,${BASE}`,
      `cn=user,ou=groups,${BASE}`,
    ])
    await c.unbind()
  })
  it('the root DSE names the base, the version, whoami and paged results', async () => {
    const c = new Client({ url: server.url })
    const { searchEntries } = await c.search('', { scope: 'base', attributes: ['+'] })
    expect(searchEntries[0]).toMatchObject({ namingContexts: BASE, supportedLDAPVersion: '3', supportedControl: '1.2.840.113556.1.4.319' })
    expect(searchEntries[0]?.supportedExtension).toContain('1.3.6.1.4.1.4203.1.11.3')
    await c.unbind()
  })
})

describe('controls and mechanisms', () => {
  it('refuses an operation with a critical control it does not know (12), whatever the operation; a SASL bind with 7', async () => {
    // Before, only a search refused it: a bind, compare or extended operation ran as if the control were absent.
    const unknown = new Control('1.2.3.4.5', { critical: true })
    const c = new Client({ url: server.url })
    await expect(c.bind(alice.dn, PASSWORD, unknown)).rejects.toBeInstanceOf(UnavailableCriticalExtensionError)
    expect(await c.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: '' }) // the refused bind bound nobody
    await c.bind(reader.dn, PASSWORD)
    await expect(c.compare(alice.dn, 'uid', 'alice', unknown)).rejects.toBeInstanceOf(UnavailableCriticalExtensionError)
    await expect(c.exop('1.3.6.1.4.1.4203.1.11.3', undefined, unknown)).rejects.toBeInstanceOf(UnavailableCriticalExtensionError)
    await expect(c.search(BASE, { scope: 'base' }, unknown)).rejects.toBeInstanceOf(UnavailableCriticalExtensionError)
    // The paged-results control belongs to a search only.
    const paged = new Control('1.2.840.113556.1.4.319', { critical: true })
    await expect(c.compare(alice.dn, 'uid', 'alice', paged)).rejects.toBeInstanceOf(UnavailableCriticalExtensionError)
    // The same control, not critical, is ignored.
    expect(await c.compare(alice.dn, 'uid', 'alice', new Control('1.2.3.4.5'))).toBe(true)
    await expect(c.bind('PLAIN', PASSWORD)).rejects.toBeInstanceOf(AuthMethodNotSupportedError)
    await c.unbind()
  })
  it('answers an extended operation it does not know with protocolError (2), as RFC 4511 §4.12 asks; the connection goes on', async () => {
    const c = await client(server, reader.dn)
    await expect(c.exop('1.2.3.4.5')).rejects.toBeInstanceOf(ProtocolError)
    expect(await c.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: `dn:${reader.dn}` })
    await c.unbind()
  })
})

describe('compare and writes', () => {
  it('compares member and objectClass under the same visibility', async () => {
    const c = await client(server, reader.dn)
    expect(await c.compare(`cn=user,ou=groups,${BASE}`, 'member', alice.dn)).toBe(true)
    expect(await c.compare(`cn=user,ou=groups,${BASE}`, 'uniqueMember', reader.dn)).toBe(false)
    expect(await c.compare(`cn=user,ou=groups,${BASE}`, 'objectClass', 'groupofnames')).toBe(true)
    await c.unbind()
    const b = await client(server, bob.dn)
    await expect(b.compare(alice.dn, 'objectClass', 'person')).rejects.toBeInstanceOf(NoSuchObjectError)
    await b.unbind()
  })
  it('refuses add, modify, delete and modrdn with unwillingToPerform', async () => {
    const c = await client(server, reader.dn)
    await expect(c.del(alice.dn)).rejects.toBeInstanceOf(UnwillingToPerformError)
    await expect(c.modifyDN(alice.dn, 'uid=alicia')).rejects.toBeInstanceOf(UnwillingToPerformError)
    await expect(c.add(`uid=x,ou=people,${BASE}`, { objectClass: 'person', uid: 'x' })).rejects.toBeInstanceOf(UnwillingToPerformError)
    await c.unbind()
  })
})

const parseDns = (stdout: string) => [...stdout.matchAll(/^dn: (.*)$/gm)].map((m) => m[1])

describe('OpenLDAP clients (ldap-utils)', () => {
  warnSkipped('LDAP: OpenLDAP command-line clients', ldapUtilsMissing)
  it.skipIf(!!ldapUtilsMissing)('a base that names nothing answers noSuchObject with the matched DN the asker may see', async () => {
    // Before, matchedDN was always empty (RFC 4511 §4.1.9: the last entry found on the way).
    const search = (dn: string, password: string, base: string) =>
      ldapsearch(server, { bindDN: dn, password, base, scope: 'base', filter: '(objectClass=*)' })
    const missing = await search(reader.dn, PASSWORD, `uid=nobody,ou=people,${BASE}`)
    expect(missing.code).toBe(32)
    expect(missing.stdout + missing.stderr).toContain(`Matched DN: ou=people,${BASE}`)
    const deeper = await search(reader.dn, PASSWORD, `cn=x,cn=nogroup,ou=groups,${BASE}`)
    expect(deeper.stdout + deeper.stderr).toContain(`Matched DN: ou=groups,${BASE}`)
    const unit = await search(reader.dn, PASSWORD, `ou=nothing,${BASE}`)
    expect(unit.stdout + unit.stderr).toContain(`Matched DN: ${BASE}`)
    // Anonymous sees the base only; outside the tree nothing matched.
    const anonymous = await search('', '', `uid=alice,ou=people,${BASE}`)
    expect(anonymous.code).toBe(32)
    expect(anonymous.stdout + anonymous.stderr).toContain(`Matched DN: ${BASE}`)
    const outside = await search(reader.dn, PASSWORD, 'dc=elsewhere,dc=org')
    expect(outside.code).toBe(32)
    expect(outside.stdout + outside.stderr).not.toContain('Matched DN')
  })
  it.skipIf(!!ldapUtilsMissing)('ldapsearch -s children: every entry below the base, not the base (scope 3, as OpenLDAP)', async () => {
    // Before, the scope closed the connection (ldapsearch: "Can't contact LDAP server").
    const children = await ldapsearch(server, {
      bindDN: reader.dn,
      password: PASSWORD,
      base: `ou=people,${BASE}`,
      scope: 'children',
      filter: '(objectClass=*)',
      attributes: ['1.1'],
    })
    expect(children.code).toBe(0)
    expect(parseDns(children.stdout).sort()).toEqual([alice.dn, bob.dn, reader.dn].sort())
    const ofPerson = await ldapsearch(server, {
      bindDN: reader.dn,
      password: PASSWORD,
      base: alice.dn,
      scope: 'children',
      filter: '(objectClass=*)',
    })
    expect([ofPerson.code, ofPerson.stdout]).toEqual([0, ''])
    const anonymous = await ldapsearch(server, { bindDN: '', password: '', base: BASE, scope: 'children', filter: '(objectClass=*)' })
    expect([anonymous.code, anonymous.stdout]).toEqual([0, ''])
  })
  it.skipIf(!!ldapUtilsMissing)('ldapsearch, ldapwhoami and ldapmodify', async () => {
    const found = await run('ldapsearch', [
      '-x',
      '-LLL',
      '-H',
      server.url,
      '-D',
      reader.dn,
      '-w',
      PASSWORD,
      '-b',
      BASE,
      '(uid=alice)',
      'mail',
    ])
    expect(found).toMatchObject({ code: 0 })
    expect(found.stdout).toContain(`dn: ${alice.dn}`)
    expect(found.stdout).toContain(`mail: ${alice.email}`)
    const paged = await run('ldapsearch', [
      '-x',
      '-LLL',
      '-H',
      server.url,
      '-D',
      reader.dn,
      '-w',
      PASSWORD,
      '-E',
      'pr=1/noprompt',
      '-b',
      `ou=people,${BASE}`,
      '(objectClass=person)',
      'uid',
    ])
    expect(paged.code).toBe(0)
    expect(paged.stdout.match(/^uid: /gm)).toHaveLength(3)
    const limited = await run('ldapsearch', [
      '-x',
      '-LLL',
      '-H',
      server.url,
      '-D',
      reader.dn,
      '-w',
      PASSWORD,
      '-z',
      '2',
      '-b',
      `ou=people,${BASE}`,
      '(uid=*)',
      'uid',
    ])
    expect(limited.code).toBe(4)
    expect(limited.stdout.match(/^uid: /gm)).toHaveLength(2)
    const whoami = await run('ldapwhoami', ['-x', '-H', server.url, '-D', bob.dn, '-w', PASSWORD])
    expect(whoami).toMatchObject({ code: 0, stdout: `dn:uid=bob,ou=people,${BASE}\n` })
    const wrong = await run('ldapwhoami', ['-x', '-H', server.url, '-D', bob.dn, '-w', 'nope'])
    expect(wrong.code).toBe(49)
    const modify = await run(
      'ldapmodify',
      ['-x', '-H', server.url, '-D', reader.dn, '-w', PASSWORD],
      `dn: ${bob.dn}\nchangetype: modify\nreplace: cn\ncn: Robert\n`,
    )
    expect(modify.code).toBe(53)
  })
  it.skipIf(!!ldapUtilsMissing)(
    'ldappasswd changes the bound user’s own password with the old one, through the password rules',
    async () => {
      const dora = await person(server, 'dora', 'Dora')
      const short = await run('ldappasswd', ['-x', '-H', server.url, '-D', dora.dn, '-w', PASSWORD, '-a', PASSWORD, '-s', 'short'])
      expect(short.code).toBe(1)
      expect(short.stdout + short.stderr).toMatch(/Constraint violation \(19\)[\s\S]*too short/i)
      const wrongOld = await run('ldappasswd', [
        '-x',
        '-H',
        server.url,
        '-D',
        dora.dn,
        '-w',
        PASSWORD,
        '-a',
        'not it',
        '-s',
        'a new long passphrase',
      ])
      expect(wrongOld.code).toBe(1)
      expect(wrongOld.stdout + wrongOld.stderr).toMatch(/Invalid credentials \(49\)/)
      const other = await run('ldappasswd', [
        '-x',
        '-H',
        server.url,
        '-D',
        dora.dn,
        '-w',
        PASSWORD,
        '-a',
        PASSWORD,
        '-s',
        'a new long passphrase',
        bob.dn,
      ])
      expect(other.code).toBe(1)
      expect(other.stdout + other.stderr).toMatch(/Server is unwilling to perform \(53\)/)
      const changed = await run('ldappasswd', [
        '-x',
        '-H',
        server.url,
        '-D',
        dora.dn,
        '-w',
        PASSWORD,
        '-a',
        PASSWORD,
        '-s',
        'a new long passphrase',
      ])
      expect(changed).toMatchObject({ code: 0 })
      expect((await run('ldapwhoami', ['-x', '-H', server.url, '-D', dora.dn, '-w', 'a new long passphrase'])).code).toBe(0)
      expect((await run('ldapwhoami', ['-x', '-H', server.url, '-D', dora.dn, '-w', PASSWORD])).code).toBe(49)
    },
  )
})

describe('the admission rule of every face (core/admission.ts, identity.requireVerifiedEmail)', () => {
  it.skipIf(!!ldapUtilsMissing)(
    'an unverified person is absent for other viewers and binds 49 (ldapsearch); verified, present and bound',
    { timeout: 120_000 },
    async () => {
      const up = await signUp(server.base, { username: 'unverified', name: 'Una Verified', email: 'unverified@example.com' })
      const dn = `uid=unverified,ou=people,${BASE}`
      const byReader = () =>
        ldapsearch(server, {
          bindDN: reader.dn,
          password: PASSWORD,
          base: `ou=people,${BASE}`,
          scope: 'one',
          filter: '(uid=unverified)',
          attributes: ['uid'],
        })
      const absent = await byReader()
      expect(absent.code).toBe(0)
      expect(parseLdif(absent.stdout)).toEqual([])
      const bind = await ldapsearch(server, { bindDN: dn, password: PASSWORD, base: BASE, scope: 'base', filter: '(objectClass=*)' })
      expect(bind.code).toBe(49)

      await markVerified(server, up.user.id)
      const present = await byReader()
      expect(parseLdif(present.stdout)).toEqual([{ dn, attributes: [{ name: 'uid', values: ['unverified'] }] }])
      const bound = await run('/usr/bin/ldapwhoami', ['-x', '-H', server.url, '-D', dn, '-w', PASSWORD])
      expect(bound).toMatchObject({ code: 0, stdout: `dn:${dn}\n` })
    },
  )
})

describe('group names (issue 47 §3: names no one can claim)', () => {
  it.skipIf(!!ldapUtilsMissing)(
    'a team is the group cn=<org slug>/<team slug> (ldapsearch): no team name can carry a separator (`,` `;` space) into a DN or cn',
    { timeout: 120_000 },
    async () => {
      const up = await verifiedSignUp(server, { username: 'tessa', name: 'Tess Teams', email: 'tessa@example.com' })
      await joinTeamsNamed(up.client, up.user.id, { name: 'Commas', slug: 'commas-ldap' }, SEPARATOR_TEAM_NAMES)
      const dn = `uid=tessa,ou=people,${BASE}`
      // '!!!' has no letter or digit: no group. Team groups sorted by name (the one group rule, as Remote-Groups).
      const names = [
        'user',
        'commas-ldap',
        'commas-ldap:owner',
        'commas-ldap/a-admin',
        'commas-ldap/commas',
        'commas-ldap/equipe-ete',
        'commas-ldap/release-ops',
        'commas-ldap/x-admin',
      ]
      const ofPerson = await ldapsearch(server, {
        bindDN: reader.dn,
        password: PASSWORD,
        base: dn,
        scope: 'base',
        filter: '(objectClass=*)',
        attributes: ['memberOf'],
      })
      expect(ofPerson.code).toBe(0)
      expect(parseLdif(ofPerson.stdout)).toEqual([
        { dn, attributes: [{ name: 'memberOf', values: names.map((name) => `cn=${name},ou=groups,${BASE}`) }] },
      ])
      // The group entries name them the same way, with the person as member.
      const groups = await ldapsearch(server, {
        bindDN: reader.dn,
        password: PASSWORD,
        base: `ou=groups,${BASE}`,
        scope: 'one',
        filter: `(&(member=${dn})(cn=commas-ldap*))`,
        attributes: ['cn', 'member'],
      })
      expect(groups.code).toBe(0)
      const entries = parseLdif(groups.stdout)
      expect(entries.map((e) => e.dn).sort()).toEqual(
        names
          .filter((name) => name.startsWith('commas-ldap'))
          .map((name) => `cn=${name},ou=groups,${BASE}`)
          .sort(),
      )
      for (const entry of entries) {
        const cn = entry.attributes.find((a) => a.name === 'cn')?.values ?? []
        expect(cn).toHaveLength(1)
        expect(entry.dn).toBe(`cn=${cn[0]},ou=groups,${BASE}`)
        expect(cn.every(noSeparator)).toBe(true)
        expect(entry.attributes.find((a) => a.name === 'member')?.values).toEqual([dn])
      }
    },
  )
})
