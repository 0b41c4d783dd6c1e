import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setRole, systemActor } from '../../../server/features/admin/index.js'
import { createAppPassword } from '../../../server/features/app-passwords/rules.js'
import { warnSkipped } from '../../helpers/engines.js'
import { verifiedSignUp } from '../../helpers/members.js'
import {
  type LdapServer,
  type LdifEntry,
  ldapUtilsMissing,
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
  const command = block.split(/(?<!\\)\n/)[0]?.replace(/\\\n/g, ' ') ?? ''
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

let server: LdapServer
let service: { dn: string; appPassword: string }
let alice: Person
let bob: Person
beforeAll(async () => {
  server = await startLdapServer({
    config: { admin: { roles: { 'ldap-reader': { user: [] } } } },
    ldap: { searchRoles: ['admin', 'ldap-reader'] },
  })
  // The docs' service user: made by email (no username), so its uid is its email.
  const made = await verifiedSignUp(server, { email: 'ldap-reader@gatehouse.lan', name: 'LDAP reader' })
  await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: made.user.id, role: 'ldap-reader' }, null)
  const app = await createAppPassword(server.gatehouse.ctx, made.user.id, { name: 'recipes' }, null)
  service = { dn: 'uid=ldap-reader@gatehouse.lan,ou=people,dc=gatehouse,dc=lan', appPassword: app.password }
  alice = await person(server, 'alice', 'Alice Liddell', 'admin')
  bob = await person(server, 'bob', 'Bob Builder')
})
afterAll(() => server?.close())

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

interface Bound {
  url: string
  bindDN: string
  password: string
}

/** `ldapsearch` bound as the app's service user; fails on any result but success. */
async function search(
  as: Bound,
  base: string,
  filter: string,
  attributes: string[] = [],
  options: { scope?: 'base' | 'sub'; pageSize?: string } = {},
): Promise<LdifEntry[]> {
  const result = await run('/usr/bin/ldapsearch', [
    '-x',
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
  ])
  expect(result.code, `${filter}: ${result.stderr}`).toBe(0)
  return parseLdif(result.stdout)
}

const values = (entry: LdifEntry | undefined, name: string) =>
  entry?.attributes.find((a) => a.name.toLowerCase() === name.toLowerCase())?.values ?? []
const same = (a: string, b: string) => a.toLowerCase().replace(/\s+/g, '') === b.toLowerCase().replace(/\s+/g, '')

/** The person's own bind with the DN the app found (`ldapwhoami`): their password opens, a wrong one is 49. */
async function personBinds(at: string, dn: string, password = PASSWORD): Promise<void> {
  const ok = await run('/usr/bin/ldapwhoami', ['-x', '-H', at, '-D', dn, '-w', password])
  expect(ok.code, ok.stderr).toBe(0)
  expect(ok.stdout.trim()).toBe(`dn:${dn.toLowerCase()}`)
  const wrong = await run('/usr/bin/ldapwhoami', ['-x', '-H', at, '-D', dn, '-w', 'not the password'])
  expect(wrong.code).toBe(49)
}

describe('docs/LDAP.md recipes, as each app uses them', () => {
  warnSkipped('LDAP: the app recipes (ldapsearch, ldapwhoami)', ldapUtilsMissing)
  const test = it.skipIf(!!ldapUtilsMissing)

  test('Jellyfin (LDAP Authentication plugin)', async () => {
    const f = fields(recipe('Jellyfin'))
    expect([f['Secure LDAP'], f.StartTls]).toEqual(['off', 'off'])
    const as = {
      url: url(f['LDAP Server'] as string, f['LDAP Port'] as string),
      bindDN: f['LDAP Bind User'] as string,
      password: servicePassword(f['LDAP Bind User Password']),
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
    await personBinds(as.url, alice.dn)
    // Admins: the entries the admin filter finds under the same base.
    const admins = (await search(as, base, f['LDAP Admin Filter'] as string, ['1.1'])).map((e) => e.dn)
    expect(admins.some((dn) => same(dn, alice.dn))).toBe(true)
    expect(admins.some((dn) => same(dn, bob.dn))).toBe(false)
  })

  test('Nextcloud (user_ldap)', async () => {
    const c = Object.fromEntries(
      [...recipe('Nextcloud').matchAll(/^occ ldap:set-config s01 (\w+) '([^']*)'$/gm)].map((m) => [m[1] as string, m[2] as string]),
    )
    expect(c.ldapTLS).toBe('0')
    const as = {
      url: url(c.ldapHost as string, c.ldapPort as string),
      bindDN: c.ldapAgentName as string,
      password: servicePassword(c.ldapAgentPassword),
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
    await personBinds(as.url, alice.dn)
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
    const o = commandOptions(recipe('Gitea / Forgejo'))
    expect(o['security-protocol']).toBe('unencrypted')
    const as = {
      url: url(o.host as string, o.port as string),
      bindDN: o['bind-dn'] as string,
      password: servicePassword(o['bind-password']),
    }
    // Gitea formats its user filter with the login (fmt.Sprintf: %[1]s is the first argument).
    const attributes = ['username', 'firstname', 'surname', 'email'].map((a) => o[`${a}-attribute`] as string)
    const found = await search(as, o['user-search-base'] as string, (o['user-filter'] as string).replaceAll('%[1]s', 'alice'), attributes)
    expect(found.map((e) => e.dn)).toEqual([alice.dn])
    expect(attributes.map((a) => values(found[0], a))).toEqual([['alice'], ['Alice'], ['Liddell'], ['alice@example.com']])
    await personBinds(as.url, alice.dn)
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
    expect(o.mode).toBe('ldap')
    const as = { url: url(o.server1 as string, o.port as string), bindDN: o.bind_dn as string, password: servicePassword(o.password) }
    // A sign-in looks the person up by user_attr (with the realm's filter and user classes), then binds as them.
    const classes = (list: string) =>
      `(|${list
        .split(',')
        .map((c) => `(objectclass=${c})`)
        .join('')})`
    const users = (who: string) => `(&(${o.user_attr}=${who})${classes(o.user_classes as string)}${o.filter})`
    const found = await search(as, o.base_dn as string, users('alice'), ['1.1'])
    expect(found.map((e) => e.dn)).toEqual([alice.dn])
    await personBinds(as.url, alice.dn)
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
    expect([f['Anonymous mode'], f['Use StartTLS'], f['Use TLS']]).toEqual(['off', 'off', 'off'])
    const as = { url: url(host as string, port as string), bindDN: f['Reader DN'] as string, password: servicePassword(f.Password) }
    const user = (key: string) => f[`User search configurations → ${key}`] as string
    const group = (key: string) => f[`Group search configurations → ${key}`] as string
    // Portainer: (&<filter>(<username attribute>=<login>)) under the base DN, then the person's bind.
    const found = await search(as, user('Base DN'), `(&${user('Filter')}(${user('Username attribute')}=alice))`, ['1.1'])
    expect(found.map((e) => e.dn)).toEqual([alice.dn])
    await personBinds(as.url, alice.dn)
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
    expect(f.Encryption).toBe('None')
    const as = {
      url: url(f['Server address'] as string, f['Port (Advanced)'] as string),
      bindDN: f['Bind DN'] as string,
      password: servicePassword(f.Password),
    }
    const [passwdFilter, userBase] = (f['Custom profile → filter passwd'] as string).split(' · user base: ') as [string, string]
    const [groupFilter, groupBase] = (f['Custom profile → filter group'] as string).split(' · group base: ') as [string, string]
    expect(userBase.endsWith(f['Base DN'] as string) && groupBase.endsWith(f['Base DN'] as string)).toBe(true)
    // As nss-ldap does: the passwd filter with the login's uid, then the person's bind.
    const found = await search(as, userBase, `(&${passwdFilter}(uid=alice))`, ['uid', 'cn', 'mail'])
    expect(found.map((e) => e.dn)).toEqual([alice.dn])
    await personBinds(as.url, alice.dn)
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
import json, sys
from ldap3 import Server, Connection, SUBTREE
url, bind_dn, authtok, base, object_class, name_attr, page, login, password = sys.argv[1:10]
conn = Connection(Server(url), user=bind_dn, password=authtok, auto_bind=True)
# sssd's user lookup: (&(<ldap_user_name>=<login>)(objectclass=<ldap_user_object_class>)), paged.
found = conn.extend.standard.paged_search(base, '(&(%s=%s)(objectclass=%s))' % (name_attr, login, object_class), SUBTREE, attributes=[name_attr], paged_size=int(page), generator=False)
dns = [e['dn'] for e in found if e['type'] == 'searchResEntry']
everyone = conn.extend.standard.paged_search(base, '(objectclass=%s)' % object_class, SUBTREE, attributes=[name_attr], paged_size=1, generator=False)
user = Connection(Server(url), user=dns[0], password=password)
wrong = Connection(Server(url), user=dns[0], password='not the password')
print(json.dumps({'dns': dns, 'everyone': sorted(e['attributes'][name_attr][0] for e in everyone if e['type'] == 'searchResEntry'), 'bind': user.bind(), 'whoami': user.extend.standard.who_am_i(), 'wrong': wrong.bind(), 'wrong_result': wrong.result['result']}))
`

describe('docs/LDAP.md SSSD recipe, as sssd uses it (python3 ldap3, paged)', () => {
  const missing = ldap3Missing
  warnSkipped('LDAP: the SSSD recipe (python3-ldap3)', missing)
  it.skipIf(!!missing)('finds the person with a paged search and checks their password with their own bind', async () => {
    const conf = Object.fromEntries(
      [...recipe('SSSD (Linux sign-in)').matchAll(/^(\w+) = (.*)$/gm)].map((m) => [m[1] as string, m[2] as string]),
    )
    expect([conf.id_provider, conf.auth_provider, conf.ldap_id_use_start_tls]).toEqual(['proxy', 'ldap', 'false'])
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
    ])
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual({
      dns: [alice.dn],
      everyone: ['alice', 'bob', 'ldap-reader@gatehouse.lan'],
      bind: true,
      whoami: `dn:${alice.dn}`,
      wrong: false,
      wrong_result: 49,
    })
  })
})
