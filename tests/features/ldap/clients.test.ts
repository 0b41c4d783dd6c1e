import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, warnSkipped } from '../../helpers/engines.js'
import { CA_FILE } from '../../../renderer/src/features/ldap/recipes.js'
import { BASE, type LdapServer, makeLanCertificates, PASSWORD, type Person, person, run, startLdapServer } from './helpers.js'

/**
 * Python's ldap3 and Apache's mod_authnz_ldap against the directory, both started by the test on
 * loopback, over StartTLS with the certificate docs/LDAP.md makes (ldap.requireTLS on: a bind in
 * clear would be refused), each checking it against the CA.
 */

const PYTHON = '/usr/bin/python3'
const APACHE = '/usr/sbin/apache2'
const MODULES = '/usr/lib/apache2/modules'
const ldap3Missing =
  existsSync(PYTHON) && (await run(PYTHON, ['-c', 'import ldap3'])).code === 0 ? undefined : 'no python3-ldap3 (Debian\'s "python3-ldap3")'
const apacheMissing =
  existsSync(APACHE) && existsSync(join(MODULES, 'mod_authnz_ldap.so')) ? undefined : 'no Apache with mod_authnz_ldap (Debian\'s "apache2")'

const certDir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-clients-'))
const certs = makeLanCertificates(certDir)

let server: LdapServer
let reader: Person
let alice: Person
let bob: Person
beforeAll(async () => {
  server = await startLdapServer({
    config: { admin: { roles: { 'ldap-reader': { user: [] } } } },
    ldap: { searchRoles: ['admin', 'ldap-reader'], tls: { cert: certs.cert, key: certs.key } },
  })
  reader = await person(server, 'svcreader', 'Service Reader', 'ldap-reader')
  alice = await person(server, 'alice', 'Alice Liddell', 'admin')
  bob = await person(server, 'bob', 'Bob Builder')
})
afterAll(async () => {
  await server?.close()
  rmSync(certDir, { recursive: true, force: true })
})

const LDAP3_SCRIPT = `
import json, ssl, sys
from ldap3 import Server, Connection, Tls, SUBTREE, AUTO_BIND_TLS_BEFORE_BIND
url, base, reader, password, alice, cacert = sys.argv[1:7]
tls = Tls(ca_certs_file=cacert, validate=ssl.CERT_REQUIRED)
conn = Connection(Server(url, tls=tls), user=reader, password=password, auto_bind=AUTO_BIND_TLS_BEFORE_BIND)
out = {'whoami': conn.extend.standard.who_am_i(), 'tls': conn.tls_started}
entries = conn.extend.standard.paged_search('ou=people,' + base, '(objectClass=inetOrgPerson)', SUBTREE, attributes=['uid', 'mail'], paged_size=1, generator=False)
out['paged'] = sorted(e['attributes']['uid'][0] for e in entries if e['type'] == 'searchResEntry')
conn.search(base, '(&(objectClass=groupOfNames)(cn=admin))', SUBTREE, attributes=['member'])
out['admins'] = [str(m) for m in conn.entries[0].member.values]
out['compare'] = conn.compare('cn=admin,ou=groups,' + base, 'member', alice)
wrong = Connection(Server(url, tls=tls), user=alice, password='wrong')
wrong.open()
wrong.start_tls()
out['wrong_bind'] = wrong.bind()
out['wrong_result'] = wrong.result['result']
print(json.dumps(out))
`

describe('python3 ldap3', () => {
  warnSkipped('LDAP: python3-ldap3 client', ldap3Missing)
  it.skipIf(!!ldap3Missing)(
    'over StartTLS checked against the CA: binds, pages, searches groups, compares; a wrong password is 49',
    async () => {
      const result = await run(PYTHON, ['-c', LDAP3_SCRIPT, server.url, BASE, reader.dn, PASSWORD, alice.dn, certs.ca])
      expect(result.stderr).toBe('')
      expect(JSON.parse(result.stdout)).toEqual({
        whoami: `dn:${reader.dn}`,
        tls: true,
        paged: ['alice', 'bob', 'svcreader'],
        admins: [alice.dn],
        compare: true,
        wrong_bind: false,
        wrong_result: 49,
      })
    },
  )
})

/**
 * docs/LDAP.md's Apache recipe (the one the panel's LDAP view shows), as written: only this test's
 * LDAP address, its service user's DN, that user's password and the CA file are put in for the
 * recipe's placeholders (gatehouse.lan:3890, uid=ldap-reader@gatehouse.lan,
 * APP_PASSWORD_OF_THE_SERVICE_USER, /usr/local/share/ca-certificates/gatehouse-ca.crt). The recipe
 * asks for StartTLS (` TLS` after the URL) and trusts the CA (LDAPTrustedGlobalCert): without either,
 * every sign-in here would fail (13, or the handshake).
 */
function apacheRecipe(): string {
  const doc = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'LDAP.md'), 'utf8')
  const block = /### Apache mod_authnz_ldap\n[\s\S]*?```\n([\s\S]*?)```/.exec(doc)?.[1]
  if (!block) throw new Error('docs/LDAP.md has no Apache mod_authnz_ldap recipe')
  expect(block).toMatch(/^LDAPTrustedGlobalCert CA_BASE64 \S+\n/)
  expect(block).toMatch(/\?\(objectClass=person\)" TLS\n/)
  return block
    .replace(`LDAPTrustedGlobalCert CA_BASE64 ${CA_FILE}\n`, `LDAPTrustedGlobalCert CA_BASE64 ${certs.ca}\n`)
    .replace('ldap://gatehouse.lan:3890', server.url)
    .replace('uid=ldap-reader@gatehouse.lan,ou=people,dc=gatehouse,dc=lan', reader.dn)
    .replace('APP_PASSWORD_OF_THE_SERVICE_USER', PASSWORD)
}

describe('Apache mod_authnz_ldap (docs/LDAP.md recipe)', () => {
  warnSkipped('LDAP: Apache mod_authnz_ldap', apacheMissing)
  it.skipIf(!!apacheMissing)(
    'Require ldap-group admits a member of the group with basic auth, and no one else',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gatehouse-apache-'))
      const port = await freePort()
      mkdirSync(join(dir, 'www', 'private'), { recursive: true })
      writeFileSync(join(dir, 'www', 'private', 'index.html'), 'behind ldap\n')
      writeFileSync(
        join(dir, 'httpd.conf'),
        `ServerRoot ${dir}
ServerName 127.0.0.1
Listen 127.0.0.1:${port}
PidFile ${dir}/httpd.pid
ErrorLog ${dir}/error.log
LogLevel warn
LoadModule mpm_event_module ${MODULES}/mod_mpm_event.so
LoadModule authz_core_module ${MODULES}/mod_authz_core.so
LoadModule authn_core_module ${MODULES}/mod_authn_core.so
LoadModule auth_basic_module ${MODULES}/mod_auth_basic.so
LoadModule ldap_module ${MODULES}/mod_ldap.so
LoadModule authnz_ldap_module ${MODULES}/mod_authnz_ldap.so
DocumentRoot ${dir}/www
<Directory ${dir}/www>
  Require all granted
</Directory>
${apacheRecipe()}`,
      )
      const apache = spawn(APACHE, ['-X', '-f', join(dir, 'httpd.conf')], {
        stdio: 'ignore',
        // No LDAPTLS_* from the test's environment: the recipe's LDAPTrustedGlobalCert is the only trust.
        env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LDAPTLS_'))), APACHE_RUN_USER: 'root' },
      })
      try {
        const get = async (user?: string, password?: string) => {
          const headers: Record<string, string> = user
            ? { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` }
            : {}
          return fetch(`http://127.0.0.1:${port}/private/index.html`, { headers })
        }
        // Apache takes a moment to listen (bounded).
        let first: Response | undefined
        for (let i = 0; i < 100 && !first; i++)
          first = await get().catch(() => new Promise<undefined>((r) => setTimeout(() => r(undefined), 100)))
        expect(first?.status).toBe(401)
        const admitted = await get('alice', PASSWORD)
        expect([admitted.status, await admitted.text()]).toEqual([200, 'behind ldap\n'])
        expect((await get('ALICE', PASSWORD)).status).toBe(200)
        expect((await get('alice', 'wrong password')).status).toBe(401)
        expect((await get(bob.username, PASSWORD)).status).toBe(401)
        expect((await get('nobody', PASSWORD)).status).toBe(401)
      } catch (error) {
        const log = existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''
        throw new Error(`${(error as Error).message}\n--- apache error.log ---\n${log}`)
      } finally {
        apache.kill('SIGTERM')
        await new Promise((r) => apache.once('exit', r))
        rmSync(dir, { recursive: true, force: true })
      }
    },
    60_000,
  )
})
