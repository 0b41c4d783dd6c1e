import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setRole, systemActor } from '../../../server/features/admin/index.js'
import { createAppPassword } from '../../../server/features/app-passwords/rules.js'
import { CA_FILE, DOC_VALUES, RECIPES } from '../../../renderer/src/features/ldap/recipes.js'
import { freePort, warnSkipped } from '../../helpers/engines.js'
import { verifiedSignUp } from '../../helpers/members.js'
import {
  type LdapServer,
  type LdifEntry,
  type LanCertificates,
  ldapUtilsMissing,
  makeLanCertificates,
  PASSWORD,
  type Person,
  parseLdif,
  person,
  run,
  startLdapServer,
} from './helpers.js'

/**
 * docs/LDAP.md's app recipes, executed as written, the way each app uses its settings (the apps
 * themselves cannot run here). Each block is read from the docs; only the placeholders the docs
 * name are filled: the host `gatehouse.lan` and port 3890 (this test's listener) and
 * APP_PASSWORD_OF_THE_SERVICE_USER (an app password of the service user, who is the docs' own
 * `ldap-reader@gatehouse.lan` with the `ldap-reader` role). Then, as the app would: bind as the
 * service user, search with the recipe's base and user filter with the login put in as the app
 * spells it, read the attributes it maps, bind as the DN found with the person's password
 * (`ldapwhoami`), and evaluate its group or admin filter. OpenLDAP's `ldapsearch`/`ldapwhoami`
 * (Debian ldap-utils) run the LDAP side; SSSD's lookup is Python ldap3 with paged results, as sssd
 * pages. Apache mod_authnz_ldap runs for real in clients.test.ts.
 *
 * Over TLS, as the docs configure it: the listener has the certificate docs/LDAP.md "Make a CA and a
 * server certificate" makes (its commands run as written, in a temporary directory) and
 * `ldap.requireTLS` (on by default with `ldap.tls`), so a recipe that forgot StartTLS fails its bind
 * with confidentialityRequired (13). Every client checks the certificate against that CA, named where
 * the recipe names it (/usr/local/share/ca-certificates/gatehouse-ca.crt, this test's ca.crt put in):
 * LDAPTLS_CACERT with LDAPTLS_REQCERT=demand for the OpenLDAP tools, ldap3's Tls(ca_certs_file,
 * CERT_REQUIRED). The ldapsearch and Python blocks run as written (sh, python3).
 */

const PLACEHOLDER = 'APP_PASSWORD_OF_THE_SERVICE_USER'
const PYTHON = '/usr/bin/python3'
const ldap3Missing =
  existsSync(PYTHON) && (await run(PYTHON, ['-c', 'import ldap3'])).code === 0 ? undefined : 'no python3-ldap3 (Debian\'s "python3-ldap3")'
const doc = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'LDAP.md'), 'utf8')

/** The fenced block under `### <title>` in docs/LDAP.md, verbatim. */
function recipe(title: string): string {
  const escaped = title.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const block = new RegExp(`### ${escaped}\\n[\\s\\S]*?\`\`\`\\n([\\s\\S]*?)\`\`\``).exec(doc)?.[1]
  if (!block) throw new Error(`docs/LDAP.md has no recipe "${title}"`)
  return block
}

/** `Key: value` lines (Jellyfin, Portainer, Synology). */
function fields(block: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of block.split('\n')) {
    const at = line.indexOf(': ')
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 2)
  }
  return out
}

/** The options of the first shell command of a block (`--flag value`, `--flag 'quoted value'`, `--switch`). */
function commandOptions(block: string): Record<string, string> {
  const command =
    block
      .split(/(?<!\\)\n/)
      .find((line) => !line.startsWith('#'))
      ?.replace(/\\\n/g, ' ') ?? ''
  const words = [...command.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? (m[2] as string))
  const out: Record<string, string> = {}
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string
    if (!word.startsWith('--')) continue
    const next = words[i + 1]
    out[word.slice(2)] = next !== undefined && !next.startsWith('--') ? next : 'true'
    if (out[word.slice(2)] !== 'true') i++
  }
  return out
}

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-recipes-'))
const certs: LanCertificates = makeLanCertificates(dir)

/** The CA a recipe puts in the system store (its `# The CA: <file> on this machine, …` line). */
function systemStoreCa(block: string): string | undefined {
  return /^# The CA: (\S+) on this machine, then \(as root\) update-ca-certificates$/m.exec(block)?.[1]
}

let server: LdapServer
let ldapsPort: number
let service: { dn: string; appPassword: string }
let alice: Person
let bob: Person
beforeAll(async () => {
  ldapsPort = await freePort()
  server = await startLdapServer({
    config: { admin: { roles: { 'ldap-reader': { user: [] } } } },
    ldap: {
      searchRoles: ['admin', 'ldap-reader'],
      tls: { cert: certs.cert, key: certs.key },
      ldapsAddress: `127.0.0.1:${ldapsPort}`,
    },
  })
  // The docs' service user: made by email (no username), so its uid is its email.
  const made = await verifiedSignUp(server, { email: 'ldap-reader@gatehouse.lan', name: 'LDAP reader' })
  await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: made.user.id, role: 'ldap-reader' }, null)
  const app = await createAppPassword(server.gatehouse.ctx, made.user.id, { name: 'recipes' }, null)
  service = { dn: 'uid=ldap-reader@gatehouse.lan,ou=people,dc=gatehouse,dc=lan', appPassword: app.password }
  alice = await person(server, 'alice', 'Alice Liddell', 'admin')
  bob = await person(server, 'bob', 'Bob Builder')
})
afterAll(async () => {
  await server?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** The LDAP URL for a recipe's host and port: the docs' values, for this test's listener. */
function url(host: string, port: string): string {
  expect([host, port]).toEqual(['gatehouse.lan', '3890'])
  return server.url
}

/** The service user's password field: the placeholder the docs name, for its app password. */
function servicePassword(value: string | undefined): string {
  expect(value).toBe(PLACEHOLDER)
  return service.appPassword
}

/** The CA file a recipe names: the docs' path, for this test's CA. */
function caOf(path: string | undefined): string {
  expect(path).toBe(CA_FILE)
  return certs.ca
}

/** The OpenLDAP tools' environment with the recipe's CA, the certificate demanded (helpers' run() defaults to never). */
const tlsEnv = (ca: string) => ({ LDAPTLS_CACERT: ca, LDAPTLS_REQCERT: 'demand' })

interface Bound {
  url: string
  bindDN: string
  password: string
  /** The CA the recipe has the app trust; every connection does StartTLS (-ZZ) checked against it. */
  ca: string
}

/** `ldapsearch` bound as the app's service user; fails on any result but success. */
async function search(
  as: Bound,
  base: string,
  filter: string,
  attributes: string[] = [],
  options: { scope?: 'base' | 'sub'; pageSize?: string } = {},
): Promise<LdifEntry[]> {
  const result = await run(
    '/usr/bin/ldapsearch',
    [
      '-x',
      '-ZZ',
      '-LLL',
      '-o',
      'ldif_wrap=no',
      '-H',
      as.url,
      '-D',
      as.bindDN,
      '-w',
      as.password,
      ...(options.pageSize ? ['-E', `pr=${options.pageSize}/noprompt`] : []),
      '-b',
      base,
      '-s',
      options.scope ?? 'sub',
      filter,
      ...attributes,
    ],
    undefined,
    tlsEnv(as.ca),
  )
  expect(result.code, `${filter}: ${result.stderr}`).toBe(0)
  return parseLdif(result.stdout)
}

const values = (entry: LdifEntry | undefined, name: string) =>
  entry?.attributes.find((a) => a.name.toLowerCase() === name.toLowerCase())?.values ?? []
const same = (a: string, b: string) => a.toLowerCase().replace(/\s+/g, '') === b.toLowerCase().replace(/\s+/g, '')

/** The person's own bind with the DN the app found (`ldapwhoami -ZZ`): their password opens, a wrong one is 49. */
async function personBinds(as: Bound, dn: string, password = PASSWORD): Promise<void> {
  const ok = await run('/usr/bin/ldapwhoami', ['-x', '-ZZ', '-H', as.url, '-D', dn, '-w', password], undefined, tlsEnv(as.ca))
  expect(ok.code, ok.stderr).toBe(0)
  expect(ok.stdout.trim()).toBe(`dn:${dn.toLowerCase()}`)
  const wrong = await run('/usr/bin/ldapwhoami', ['-x', '-ZZ', '-H', as.url, '-D', dn, '-w', 'not the password'], undefined, tlsEnv(as.ca))
  expect(wrong.code).toBe(49)
}

describe('docs/LDAP.md recipes, as each app uses them', () => {
  warnSkipped('LDAP: the app recipes (ldapsearch, ldapwhoami)', ldapUtilsMissing)
  const test = it.skipIf(!!ldapUtilsMissing)

  test('the TLS the recipes rely on is checked: in clear a bind is 13, against another CA StartTLS fails', async () => {
    const clear = await run('/usr/bin/ldapwhoami', ['-x', '-H', server.url, '-D', alice.dn, '-w', PASSWORD], undefined, tlsEnv(certs.ca))
    expect(clear.code).toBe(13)
    const other = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-other-ca-'))
    try {
      const stranger = makeLanCertificates(other)
      const refused = await run(
        '/usr/bin/ldapwhoami',
        ['-x', '-ZZ', '-H', server.url, '-D', alice.dn, '-w', PASSWORD],
        undefined,
        tlsEnv(stranger.ca),
      )
      expect(refused.code, refused.stderr).not.toBe(0)
      expect(refused.stderr).toMatch(/ldap_start_tls: Connect error \(-11\)/)
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
    const ok = await run(
      '/usr/bin/ldapwhoami',
      ['-x', '-ZZ', '-H', server.url, '-D', alice.dn, '-w', PASSWORD],
      undefined,
      tlsEnv(certs.ca),
    )
    expect(ok).toMatchObject({ code: 0, stdout: `dn:${alice.dn}\n` })
  })

  test('Jellyfin (LDAP Authentication plugin)', async () => {
    const f = fields(recipe('Jellyfin'))
    expect([f['Secure LDAP'], f.StartTls, f['Skip SSL/TLS Verification']]).toEqual(['off', 'on', 'off'])
    const as = {
      url: url(f['LDAP Server'] as string, f['LDAP Port'] as string),
      bindDN: f['LDAP Bind User'] as string,
      password: servicePassword(f['LDAP Bind User Password']),
      ca: caOf(f['LDAP Root CA Path']),
    }
    const base = f['LDAP Base DN for searches'] as string
    // The plugin ANDs its search filter with an OR of (attribute=login) over the search attributes.
    const attributes = (f['LDAP Search Attributes'] as string).split(',').map((a) => a.trim())
    const lookup = (login: string) => `(&${f['LDAP Search Filter']}(|${attributes.map((a) => `(${a}=${login})`).join('')}))`
    for (const login of ['alice', 'alice@example.com']) {
      const found = await search(as, base, lookup(login), [f['LDAP Uid Attribute'] as string, f['LDAP Username Attribute'] as string])
      expect(found.map((e) => e.dn)).toEqual([alice.dn])
      expect(values(found[0], f['LDAP Username Attribute'] as string)).toEqual(['alice'])
      expect(values(found[0], f['LDAP Uid Attribute'] as string)).toEqual(['alice'])
    }
    await personBinds(as, alice.dn)
    // Admins: the entries the admin filter finds under the same base.
    const admins = (await search(as, base, f['LDAP Admin Filter'] as string, ['1.1'])).map((e) => e.dn)
    expect(admins.some((dn) => same(dn, alice.dn))).toBe(true)
    expect(admins.some((dn) => same(dn, bob.dn))).toBe(false)
  })

  test('Nextcloud (user_ldap)', async () => {
    const c = Object.fromEntries(
      [...recipe('Nextcloud').matchAll(/^occ ldap:set-config s01 (\w+) '([^']*)'$/gm)].map((m) => [m[1] as string, m[2] as string]),
    )
    expect(c.ldapTLS).toBe('1')
    const as = {
      url: url(c.ldapHost as string, c.ldapPort as string),
      bindDN: c.ldapAgentName as string,
      password: servicePassword(c.ldapAgentPassword),
      // PHP's LDAP is OpenLDAP's library: the system store (TLS_CACERT) is LDAPTLS_CACERT here.
      ca: caOf(systemStoreCa(recipe('Nextcloud'))),
    }
    const wanted = [c.ldapExpertUsernameAttr, c.ldapUserDisplayName, c.ldapEmailAttribute, c.ldapExpertUUIDUserAttr] as string[]
    // Login by uid or by email: %uid is what the person typed.
    for (const login of ['alice', 'ALICE@example.com']) {
      const found = await search(as, c.ldapBaseUsers as string, (c.ldapLoginFilter as string).replaceAll('%uid', login), wanted)
      expect(found.map((e) => e.dn)).toEqual([alice.dn])
      expect(values(found[0], c.ldapExpertUsernameAttr as string)).toEqual(['alice'])
      expect(values(found[0], c.ldapUserDisplayName as string)).toEqual(['Alice Liddell'])
      expect(values(found[0], c.ldapEmailAttribute as string)).toEqual(['alice@example.com'])
      expect(values(found[0], c.ldapExpertUUIDUserAttr as string)[0]).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      )
    }
    await personBinds(as, alice.dn)
    // The user list, paged as Nextcloud pages (ldapPagingSize), and the groups with their members.
    const everyone = await search(as, c.ldapBaseUsers as string, c.ldapUserFilter as string, wanted, { pageSize: c.ldapPagingSize })
    expect(everyone.map((e) => values(e, 'uid')[0]).sort()).toEqual(['alice', 'bob', 'ldap-reader@gatehouse.lan'])
    const groups = await search(as, c.ldapBaseGroups as string, c.ldapGroupFilter as string, ['cn', c.ldapGroupMemberAssocAttr as string])
    const admin = groups.find((g) => values(g, 'cn')[0] === 'admin')
    expect(values(admin, c.ldapGroupMemberAssocAttr as string)).toEqual([alice.dn])
    expect(
      values(
        groups.find((g) => values(g, 'cn')[0] === 'user'),
        'member',
      ),
    ).toEqual([bob.dn])
  })

  test('Gitea / Forgejo (admin auth add-ldap)', async () => {
    const block = recipe('Gitea / Forgejo')
    const o = commandOptions(block)
    expect(o['security-protocol']).toBe('starttls')
    expect(o['skip-tls-verify']).toBeUndefined()
    const as = {
      url: url(o.host as string, o.port as string),
      bindDN: o['bind-dn'] as string,
      password: servicePassword(o['bind-password']),
      ca: caOf(systemStoreCa(block)),
    }
    // Gitea formats its user filter with the login (fmt.Sprintf: %[1]s is the first argument).
    const attributes = ['username', 'firstname', 'surname', 'email'].map((a) => o[`${a}-attribute`] as string)
    const found = await search(as, o['user-search-base'] as string, (o['user-filter'] as string).replaceAll('%[1]s', 'alice'), attributes)
    expect(found.map((e) => e.dn)).toEqual([alice.dn])
    expect(attributes.map((a) => values(found[0], a))).toEqual([['alice'], ['Alice'], ['Liddell'], ['alice@example.com']])
    await personBinds(as, alice.dn)
    // Gitea's admin check: the admin filter on the person's own entry (base scope).
    expect(await search(as, alice.dn, o['admin-filter'] as string, ['1.1'], { scope: 'base' })).toHaveLength(1)
    const bobFound = await search(as, o['user-search-base'] as string, (o['user-filter'] as string).replaceAll('%[1]s', 'bob'), ['uid'])
    expect(await search(as, bobFound[0]?.dn as string, o['admin-filter'] as string, ['1.1'], { scope: 'base' })).toHaveLength(0)
    // --synchronize-users lists everyone with the filter formatted with *.
    const all = await search(as, o['user-search-base'] as string, (o['user-filter'] as string).replaceAll('%[1]s', '*'), ['uid'])
    expect(all).toHaveLength(3)
  })

  test('Proxmox VE (pveum realm add --type ldap)', async () => {
    const o = commandOptions(recipe('Proxmox VE'))
    expect([o.mode, o.verify]).toEqual(['ldap+starttls', '1'])
    const as = {
      url: url(o.server1 as string, o.port as string),
      bindDN: o.bind_dn as string,
      password: servicePassword(o.password),
      ca: caOf(o.capath),
    }
    // A sign-in looks the person up by user_attr (with the realm's filter and user classes), then binds as them.
    const classes = (list: string) =>
      `(|${list
        .split(',')
        .map((c) => `(objectclass=${c})`)
        .join('')})`
    const users = (who: string) => `(&(${o.user_attr}=${who})${classes(o.user_classes as string)}${o.filter})`
    const found = await search(as, o.base_dn as string, users('alice'), ['1.1'])
    expect(found.map((e) => e.dn)).toEqual([alice.dn])
    await personBinds(as, alice.dn)
    // `pveum realm sync` (scope=both): every user, then the groups and their members.
    expect(await search(as, o.base_dn as string, users('*'), [o.user_attr as string])).toHaveLength(3)
    const groups = await search(as, o.group_dn as string, classes(o.group_classes as string), ['cn', 'member', 'uniqueMember'])
    const admin = groups.find((g) => values(g, 'cn')[0] === 'admin')
    expect(values(admin, 'member')).toEqual([alice.dn])
    expect(values(admin, 'uniqueMember')).toEqual([alice.dn])
  })

  test('Portainer (LDAP, Custom)', async () => {
    const f = fields(recipe('Portainer'))
    const [host, port] = (f['LDAP Server'] as string).split(':')
    expect([f['Anonymous mode'], f['Use StartTLS'], f['Use TLS'], f['Skip verification of server certificate']]).toEqual([
      'off',
      'on',
      'off',
      'off',
    ])
    const as = {
      url: url(host as string, port as string),
      bindDN: f['Reader DN'] as string,
      password: servicePassword(f.Password),
      ca: caOf(f['TLS CA certificate']?.replace(/ \(upload it\)$/, '')),
    }
    const user = (key: string) => f[`User search configurations → ${key}`] as string
    const group = (key: string) => f[`Group search configurations → ${key}`] as string
    // Portainer: (&<filter>(<username attribute>=<login>)) under the base DN, then the person's bind.
    const found = await search(as, user('Base DN'), `(&${user('Filter')}(${user('Username attribute')}=alice))`, ['1.1'])
    expect(found.map((e) => e.dn)).toEqual([alice.dn])
    await personBinds(as, alice.dn)
    // Their teams: groups whose membership attribute names the person's DN.
    const teams = async (dn: string) =>
      (await search(as, group('Group Base DN'), `(&${group('Group Filter')}(${group('Group Membership Attribute')}=${dn}))`, ['cn'])).map(
        (g) => values(g, 'cn')[0],
      )
    expect(await teams(alice.dn)).toEqual(['admin'])
    expect(await teams(bob.dn)).toEqual(['user'])
  })

  test('Synology DSM (LDAP client, custom profile)', async () => {
    const f = fields(recipe('Synology DSM'))
    expect(f.Encryption).toBe('StartTLS')
    const as = {
      url: url(f['Server address'] as string, f['Port (Advanced)'] as string),
      bindDN: f['Bind DN'] as string,
      password: servicePassword(f.Password),
      // DSM's wizard takes no CA (the recipe says so): StartTLS is checked here against the LAN CA.
      ca: certs.ca,
    }
    const [passwdFilter, userBase] = (f['Custom profile → filter passwd'] as string).split(' · user base: ') as [string, string]
    const [groupFilter, groupBase] = (f['Custom profile → filter group'] as string).split(' · group base: ') as [string, string]
    expect(userBase.endsWith(f['Base DN'] as string) && groupBase.endsWith(f['Base DN'] as string)).toBe(true)
    // As nss-ldap does: the passwd filter with the login's uid, then the person's bind.
    const found = await search(as, userBase, `(&${passwdFilter}(uid=alice))`, ['uid', 'cn', 'mail'])
    expect(found.map((e) => e.dn)).toEqual([alice.dn])
    await personBinds(as, alice.dn)
    expect((await search(as, userBase, passwdFilter, ['uid'])).map((e) => values(e, 'uid')[0]).sort()).toEqual([
      'alice',
      'bob',
      'ldap-reader@gatehouse.lan',
    ])
    const groups = await search(as, groupBase, groupFilter, ['cn', 'member'])
    expect(
      values(
        groups.find((g) => values(g, 'cn')[0] === 'admin'),
        'member',
      ),
    ).toEqual([alice.dn])
  })
})

const SSSD_SCRIPT = `
import json, ssl, sys
from ldap3 import Server, Connection, Tls, SUBTREE, AUTO_BIND_TLS_BEFORE_BIND
url, bind_dn, authtok, base, object_class, name_attr, page, login, password, cacert, reqcert = sys.argv[1:12]
# sssd with ldap_id_use_start_tls, ldap_tls_cacert and ldap_tls_reqcert = demand: StartTLS before every bind, the certificate checked.
assert reqcert == 'demand'
tls = Tls(ca_certs_file=cacert, validate=ssl.CERT_REQUIRED)
conn = Connection(Server(url, tls=tls), user=bind_dn, password=authtok, auto_bind=AUTO_BIND_TLS_BEFORE_BIND)
# sssd's user lookup: (&(<ldap_user_name>=<login>)(objectclass=<ldap_user_object_class>)), paged.
found = conn.extend.standard.paged_search(base, '(&(%s=%s)(objectclass=%s))' % (name_attr, login, object_class), SUBTREE, attributes=[name_attr], paged_size=int(page), generator=False)
dns = [e['dn'] for e in found if e['type'] == 'searchResEntry']
everyone = conn.extend.standard.paged_search(base, '(objectclass=%s)' % object_class, SUBTREE, attributes=[name_attr], paged_size=1, generator=False)
def bind(dn, pw):
    c = Connection(Server(url, tls=tls), user=dn, password=pw)
    c.open()
    c.start_tls()
    return c, c.bind()
user, ok = bind(dns[0], password)
wrong, bad = bind(dns[0], 'not the password')
print(json.dumps({'dns': dns, 'everyone': sorted(e['attributes'][name_attr][0] for e in everyone if e['type'] == 'searchResEntry'), 'bind': ok, 'whoami': user.extend.standard.who_am_i(), 'wrong': bad, 'wrong_result': wrong.result['result'], 'tls': conn.tls_started and user.tls_started}))
`

describe('docs/LDAP.md SSSD recipe, as sssd uses it (python3 ldap3, paged, StartTLS)', () => {
  const missing = ldap3Missing
  warnSkipped('LDAP: the SSSD recipe (python3-ldap3)', missing)
  it.skipIf(!!missing)('finds the person with a paged search and checks their password with their own bind, over StartTLS', async () => {
    const conf = Object.fromEntries(
      [...recipe('SSSD (Linux sign-in)').matchAll(/^(\w+) = (.*)$/gm)].map((m) => [m[1] as string, m[2] as string]),
    )
    expect([conf.id_provider, conf.auth_provider, conf.ldap_id_use_start_tls]).toEqual(['proxy', 'ldap', 'true'])
    const target = /^ldap:\/\/([^:]+):(\d+)$/.exec(conf.ldap_uri as string)
    const at = url(target?.[1] as string, target?.[2] as string)
    expect((conf.ldap_user_search_base as string).endsWith(conf.ldap_search_base as string)).toBe(true)
    const result = await run(PYTHON, [
      '-c',
      SSSD_SCRIPT,
      at,
      conf.ldap_default_bind_dn as string,
      servicePassword(conf.ldap_default_authtok),
      conf.ldap_user_search_base as string,
      conf.ldap_user_object_class as string,
      conf.ldap_user_name as string,
      conf.ldap_page_size as string,
      'alice',
      PASSWORD,
      caOf(conf.ldap_tls_cacert),
      conf.ldap_tls_reqcert as string,
    ])
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual({
      dns: [alice.dn],
      everyone: ['alice', 'bob', 'ldap-reader@gatehouse.lan'],
      bind: true,
      whoami: `dn:${alice.dn}`,
      wrong: false,
      wrong_result: 49,
      tls: true,
    })
  })
})

describe('docs/LDAP.md Grafana, ldapsearch and Python recipes', () => {
  warnSkipped('LDAP: the Grafana and ldapsearch recipes (ldapsearch)', ldapUtilsMissing)
  const test = it.skipIf(!!ldapUtilsMissing)

  test('Grafana (ldap.toml): StartTLS with root_ca_cert, search_filter with %s, attributes, group mappings', async () => {
    const block = recipe('Grafana')
    // The [[servers]] table: `key = value` lines up to the first sub-table.
    const server_ = Object.fromEntries(
      [...(block.split('\n\n[')[0] as string).matchAll(/^(\w+) = (.*)$/gm)].map((m) => [
        m[1] as string,
        (m[2] as string).replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1'),
      ]),
    )
    expect([server_.use_ssl, server_.start_tls, server_.ssl_skip_verify]).toEqual(['true', 'true', 'false'])
    const as = {
      url: url(server_.host as string, server_.port as string),
      bindDN: server_.bind_dn as string,
      password: servicePassword(server_.bind_password),
      ca: caOf(server_.root_ca_cert),
    }
    const attributes = Object.fromEntries(
      [...(/\[servers\.attributes\]\n([\s\S]*?)\n\n/.exec(block)?.[1] ?? '').matchAll(/^(\w+) = "(.*)"$/gm)].map((m) => [
        m[1] as string,
        m[2] as string,
      ]),
    )
    const mappings = [...block.matchAll(/\[\[servers\.group_mappings\]\]\ngroup_dn = "(.*)"\norg_role = "(.*)"/g)].map((m) => ({
      group: m[1] as string,
      role: m[2] as string,
    }))
    const bases = JSON.parse(server_.search_base_dns as string) as string[]
    // Grafana replaces every %s of search_filter with the (escaped) login, searches each base, binds as the DN found.
    const roleOf = async (login: string, dn: string) => {
      const found = await search(
        as,
        bases[0] as string,
        (server_.search_filter as string).replaceAll('%s', login),
        Object.values(attributes),
      )
      expect(found.map((e) => e.dn)).toEqual([dn])
      const memberOf = values(found[0], attributes.member_of as string)
      // The first mapping whose group_dn is among memberOf (compared case-insensitively), or "*".
      return { entry: found[0], role: mappings.find((m) => m.group === '*' || memberOf.some((g) => same(g, m.group)))?.role }
    }
    const a = await roleOf('alice@example.com', alice.dn)
    expect(a.role).toBe('Admin')
    expect(['name', 'surname', 'username', 'email'].map((k) => values(a.entry, attributes[k] as string))).toEqual([
      ['Alice'],
      ['Liddell'],
      ['alice'],
      ['alice@example.com'],
    ])
    await personBinds(as, alice.dn)
    expect((await roleOf('bob', bob.dn)).role).toBe('Viewer')
  })

  test('ldapsearch: runs as written (sh) with the CA the docs name', async () => {
    const block = recipe('ldapsearch (OpenLDAP tools)')
    expect(block).toContain(`LDAPTLS_CACERT=${CA_FILE} \\\n`)
    expect(block).toContain(' -ZZ -H ldap://gatehouse.lan:3890 ')
    const script = block
      .replace(`LDAPTLS_CACERT=${CA_FILE}`, `LDAPTLS_CACERT=${certs.ca} LDAPTLS_REQCERT=demand`)
      .replace('ldap://gatehouse.lan:3890', server.url)
      .replace(PLACEHOLDER, service.appPassword)
    const result = await run('/bin/sh', ['-c', script], undefined, {})
    expect(result.code, result.stderr).toBe(0)
    // Without -LLL ldapsearch ends with its result as a last block: `search: 3`, `result: 0 Success`.
    expect(result.stdout).toMatch(/\nresult: 0 Success\n/)
    const entries = parseLdif(result.stdout.replace(/\n# search result\nsearch: \d+\nresult: 0 Success\n[\s\S]*$/, '\n'))
    expect(entries.map((e) => values(e, 'uid')[0]).sort()).toEqual(['alice', 'bob', 'ldap-reader@gatehouse.lan'])
    expect(
      values(
        entries.find((e) => e.dn === alice.dn),
        'memberOf',
      ),
    ).toContain('cn=admin,ou=groups,dc=gatehouse,dc=lan')
    // Without the CA the same command fails the StartTLS (-ZZ): the system store does not hold it.
    const stranger = await run('/bin/sh', ['-c', script.replace(`LDAPTLS_CACERT=${certs.ca} `, '')], undefined, {})
    expect(stranger.code).not.toBe(0)
    expect(stranger.stderr).toContain('ldap_start_tls')
  })

  test('LDAPS (ldap.ldapsAddress set): the ldapsearch and Python recipes the LDAP view renders for it run too', async () => {
    const values = { ...DOC_VALUES, host: '127.0.0.1', ldapsPort }
    const text = (id: string) =>
      (RECIPES.find((r) => r.id === id)?.text(values) ?? '').replace(CA_FILE, certs.ca).replace(PLACEHOLDER, service.appPassword)
    const shell = text('ldapsearch')
    expect(shell).toContain(`ldapsearch -x -H ldaps://127.0.0.1:${ldapsPort} `)
    const result = await run(
      '/bin/sh',
      ['-c', shell.replace(`LDAPTLS_CACERT=${certs.ca}`, `LDAPTLS_CACERT=${certs.ca} LDAPTLS_REQCERT=demand`)],
      undefined,
      {},
    )
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`dn: ${alice.dn}\n`)
    if (ldap3Missing) return
    const python = await run(PYTHON, ['-c', text('python')])
    expect(python.stderr).toBe('')
    expect(python.stdout).toContain(`${alice.dn} alice@example.com\n`)
  })

  it.skipIf(!!ldap3Missing)('Python ldap3: runs as written (python3) with Tls(ca_certs_file) and StartTLS before the bind', async () => {
    const block = recipe('Python (ldap3)')
    expect(block).toContain(`tls = Tls(ca_certs_file='${CA_FILE}', validate=ssl.CERT_REQUIRED)`)
    const script = block
      .replace(`'${CA_FILE}'`, JSON.stringify(certs.ca))
      .replace("Server('gatehouse.lan', port=3890,", `Server('127.0.0.1', port=${server.port},`)
      .replace(PLACEHOLDER, service.appPassword)
    expect(script).not.toContain("gatehouse.lan'")
    const result = await run(PYTHON, ['-c', script])
    expect(result.stderr).toBe('')
    expect(result.stdout.trim().split('\n').sort()).toEqual([
      `${alice.dn} alice@example.com`,
      `${bob.dn} bob@example.com`,
      'uid=ldap-reader@gatehouse.lan,ou=people,dc=gatehouse,dc=lan ldap-reader@gatehouse.lan',
    ])
  })
})
