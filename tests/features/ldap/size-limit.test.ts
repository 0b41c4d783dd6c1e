import { afterAll, beforeAll, expect, it } from 'vitest'
import { warnSkipped } from '../../helpers/engines.js'
import { verifiedPerson } from './edge-helpers.js'
import { BASE, type LdapServer, ldapUtilsMissing, PASSWORD, type Person, parseLdif, run, startLdapServer } from './helpers.js'

/** `ldap.maxUnpagedEntries`: an unpaged search returns at most that many entries, then sizeLimitExceeded (4); paged searches are not cut. */

let server: LdapServer
let alice: Person
beforeAll(async () => {
  server = await startLdapServer()
  await server.gatehouse.config.update({ ldap: { maxUnpagedEntries: 3 } })
  alice = await verifiedPerson(server, 'alice', 'Alice Liddell', 'admin')
  for (const name of ['bob', 'carol', 'dave', 'erin']) await verifiedPerson(server, name, name)
})
afterAll(() => server?.close())

const search = (...extra: string[]) =>
  run('/usr/bin/ldapsearch', [
    '-x',
    '-LLL',
    '-H',
    server.url,
    '-D',
    alice.dn,
    '-w',
    PASSWORD,
    '-b',
    `ou=people,${BASE}`,
    '-s',
    'one',
    ...extra,
    '(objectClass=person)',
    'uid',
  ])

warnSkipped('LDAP: maxUnpagedEntries with ldapsearch', ldapUtilsMissing)
it.skipIf(!!ldapUtilsMissing)(
  'cuts an unpaged search at maxUnpagedEntries with sizeLimitExceeded; a paged one returns everyone',
  async () => {
    const unpaged = await search()
    expect(unpaged.code).toBe(4)
    expect(parseLdif(unpaged.stdout)).toHaveLength(3)
    // A smaller size limit of the client's own still wins.
    const two = await search('-z', '2')
    expect([two.code, parseLdif(two.stdout).length]).toEqual([4, 2])
    const paged = await search('-E', 'pr=2/noprompt')
    expect(paged.code).toBe(0)
    expect(
      parseLdif(paged.stdout)
        .map((e) => e.attributes.find((a) => a.name === 'uid')?.values[0])
        .sort(),
    ).toEqual(['alice', 'bob', 'carol', 'dave', 'erin'])
    // At the default (5 000), the same unpaged search is whole.
    await server.gatehouse.config.update({ ldap: { maxUnpagedEntries: 5000 } })
    const whole = await search()
    expect([whole.code, parseLdif(whole.stdout).length]).toEqual([0, 5])
  },
)
