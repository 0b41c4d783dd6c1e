import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client, ConfidentialityRequiredError } from 'ldapts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent } from '../../../server/db/schema.js'
import { freePort, warnSkipped } from '../../helpers/engines.js'
import { verifiedPerson } from './edge-helpers.js'
import { BASE, type LdapServer, ldapUtilsMissing, makeLanCertificates, PASSWORD, type Person, run, startLdapServer } from './helpers.js'

/**
 * `ldap.requireTLS` (default: on whenever `ldap.tls` or `ldap.ldapsAddress` is set): a simple bind
 * with a password on a connection without TLS is refused `confidentialityRequired` (13) before the
 * password is looked at: no hash, no lockout count, no audit row, no sign-in counted. StartTLS and
 * LDAPS binds succeed; the CA the admin distributes is what the clients check (no
 * LDAPTLS_REQCERT=never here: the certificate is verified against that CA).
 */

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-require-tls-'))
// A CA for the LAN and a server certificate it signs, made by docs/LDAP.md's "TLS" commands as written.
const { ca, cert, key } = makeLanCertificates(dir)

let server: LdapServer
let alice: Person
let ldapsPort: number
beforeAll(async () => {
  ldapsPort = await freePort()
  server = await startLdapServer({ ldap: { tls: { cert, key }, ldapsAddress: `127.0.0.1:${ldapsPort}` } })
  alice = await verifiedPerson(server, 'alice', 'Alice Liddell', 'admin')
})
afterAll(async () => {
  await server?.close()
  rmSync(dir, { recursive: true, force: true })
})

const auditRows = async () => (await server.gatehouse.ctx.db.select().from(auditEvent)).length
const tlsOptions = () => ({ ca: [readFileSync(ca)], servername: '127.0.0.1' })

describe('ldap.requireTLS', () => {
  it('refuses a plain simple bind with confidentialityRequired, the password never checked (no audit, no count)', async () => {
    const before = await auditRows()
    const plain = new Client({ url: server.url })
    await expect(plain.bind(alice.dn, PASSWORD)).rejects.toBeInstanceOf(ConfidentialityRequiredError)
    await expect(plain.bind(alice.dn, 'a wrong password')).rejects.toBeInstanceOf(ConfidentialityRequiredError)
    await expect(plain.bind(`uid=nobody,ou=people,${BASE}`, 'x')).rejects.toBeInstanceOf(ConfidentialityRequiredError)
    // An anonymous bind carries no password: still answered.
    await plain.bind('', '')
    await plain.unbind()
    expect(await auditRows()).toBe(before)
    // Ten refused binds with a wrong password did not lock alice out: the password was never looked at.
    const again = new Client({ url: server.url })
    for (let i = 0; i < 10; i++) await expect(again.bind(alice.dn, 'wrong')).rejects.toBeInstanceOf(ConfidentialityRequiredError)
    await again.startTLS(tlsOptions())
    await again.bind(alice.dn, PASSWORD)
    expect(await again.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: `dn:${alice.dn}` })
    await again.unbind()
  })

  it('LDAPS binds, verified against the LAN CA', async () => {
    const ldaps = new Client({ url: `ldaps://127.0.0.1:${ldapsPort}`, tlsOptions: tlsOptions() })
    await ldaps.bind(alice.dn, PASSWORD)
    const { searchEntries } = await ldaps.search(`ou=people,${BASE}`, { scope: 'one', filter: '(uid=alice)', attributes: ['uid'] })
    expect(searchEntries.map((e) => e.uid)).toEqual(['alice'])
    await ldaps.unbind()
  })

  it('requireTLS: false lets a plain bind through again', async () => {
    await server.gatehouse.config.update({ ldap: { requireTLS: false } })
    try {
      const plain = new Client({ url: server.url })
      await plain.bind(alice.dn, PASSWORD)
      await plain.unbind()
    } finally {
      await server.gatehouse.config.update({ ldap: { requireTLS: true } })
    }
  })

  warnSkipped('LDAP: ldapwhoami with requireTLS', ldapUtilsMissing)
  it.skipIf(!!ldapUtilsMissing)('ldapwhoami: refused in clear (13), accepted with -ZZ and over ldaps:// with LDAPTLS_CACERT', async () => {
    const clear = await run('ldapwhoami', ['-x', '-H', server.url, '-D', alice.dn, '-w', PASSWORD])
    expect(clear.code).toBe(13)
    const env = { LDAPTLS_CACERT: ca, LDAPTLS_REQCERT: 'demand' }
    const startTls = await run('ldapwhoami', ['-x', '-ZZ', '-H', server.url, '-D', alice.dn, '-w', PASSWORD], undefined, env)
    expect(startTls).toMatchObject({ code: 0, stdout: `dn:${alice.dn}\n` })
    const ldaps = await run('ldapwhoami', ['-x', '-H', `ldaps://127.0.0.1:${ldapsPort}`, '-D', alice.dn, '-w', PASSWORD], undefined, env)
    expect(ldaps).toMatchObject({ code: 0, stdout: `dn:${alice.dn}\n` })
  })
})
