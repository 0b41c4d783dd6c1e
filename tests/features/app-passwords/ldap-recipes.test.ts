import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CA_FILE, DOC_VALUES, docBlock, hostOf, portOf, RECIPES, withTls } from '../../../renderer/src/features/ldap/recipes.js'
import { LDAP_DEFAULTS, ldapFormOf, ldapPatch } from '../../../renderer/src/features/ldap/settings.js'

/** The LDAP view's app recipes are docs/LDAP.md's, and the view reads and writes `ldap.*` as the config section names it. */

const doc = readFileSync(join(import.meta.dirname, '../../../docs/LDAP.md'), 'utf8')

describe('LDAP recipes', () => {
  it('docs/LDAP.md holds every recipe exactly as the view renders it for the documented values', () => {
    expect(RECIPES.map((r) => r.title)).toEqual([
      'Jellyfin',
      'Nextcloud',
      'Gitea / Forgejo',
      'Proxmox VE',
      'Portainer',
      'Synology DSM',
      'Apache mod_authnz_ldap',
      'SSSD (Linux sign-in)',
      'Grafana',
      'ldapsearch (OpenLDAP tools)',
      'Python (ldap3)',
    ])
    for (const recipe of RECIPES) expect(doc, recipe.id).toContain(docBlock(recipe, DOC_VALUES))
  })

  it("the documented values are StartTLS, and every recipe but Synology's (whose wizard takes none) names the CA file", () => {
    expect(withTls(DOC_VALUES)).toBe(true)
    for (const recipe of RECIPES) {
      if (recipe.id === 'synology') expect(recipe.text(DOC_VALUES)).toContain('Encryption: StartTLS')
      else expect(recipe.text(DOC_VALUES), recipe.id).toContain(CA_FILE)
    }
  })

  it('fills in the server’s values: host, port, base DN, service user; LDAPS or StartTLS when set', () => {
    const values = { host: 'nas-auth.example', port: 1389, ldapsPort: null, startTls: false, baseDN: 'dc=acme,dc=test', serviceUid: 'svc' }
    for (const recipe of RECIPES) {
      const text = recipe.text(values)
      expect(text, recipe.id).toContain('nas-auth.example')
      expect(text, recipe.id).toContain('uid=svc,ou=people,dc=acme,dc=test')
      expect(text, recipe.id).not.toMatch(/dc=gatehouse|gatehouse\.lan|3890/)
      if (recipe.id !== 'synology') expect(text, recipe.id).toContain('1389')
    }
    const byId = (id: string) => RECIPES.find((r) => r.id === id)!
    // Without ldap.tls (loopback only, the view warns): plain LDAP, no CA lines.
    expect(withTls(values)).toBe(false)
    for (const recipe of RECIPES) expect(recipe.text(values), recipe.id).not.toContain(CA_FILE)
    expect(byId('sssd').text(values)).toContain('ldap_id_use_start_tls = false')
    expect(byId('apache').text(values)).toContain(
      'AuthLDAPURL "ldap://nas-auth.example:1389/ou=people,dc=acme,dc=test?uid?sub?(objectClass=person)"',
    )
    const ldaps = { ...values, ldapsPort: 6636 }
    expect(byId('apache').text(ldaps)).toContain('"ldaps://nas-auth.example:6636/')
    expect(byId('gitea').text(ldaps)).toContain('--security-protocol ldaps')
    expect(byId('sssd').text(ldaps)).toContain('ldap_uri = ldaps://nas-auth.example:6636')
    expect(byId('sssd').text(ldaps)).toContain(`ldap_tls_cacert = ${CA_FILE}`)
    expect(byId('apache').text(ldaps)).toMatch(new RegExp(`^LDAPTrustedGlobalCert CA_BASE64 ${CA_FILE}$`, 'm'))
    expect(byId('apache').text(ldaps)).not.toMatch(/" TLS$/m)
    expect(byId('grafana').text(ldaps)).toContain('use_ssl = true\nstart_tls = false')
    expect(byId('ldapsearch').text(ldaps)).toContain('ldapsearch -x -H ldaps://nas-auth.example:6636')
    expect(byId('python').text(ldaps)).toContain("Server('nas-auth.example', port=6636, use_ssl=True, tls=tls)")
    expect(byId('proxmox').text(ldaps)).toContain('--mode ldaps \\\n  --verify 1')
    const startTls = { ...values, startTls: true }
    expect(byId('gitea').text(startTls)).toContain('--security-protocol starttls')
    expect(byId('proxmox').text(startTls)).toContain('--mode ldap+starttls')
    expect(byId('sssd').text(startTls)).toContain('ldap_id_use_start_tls = true')
    expect(byId('apache').text(startTls)).toMatch(/\?\(objectClass=person\)" TLS$/m)
    expect(byId('grafana').text(startTls)).toContain('use_ssl = true\nstart_tls = true')
    expect(byId('python').text(startTls)).toContain("auto_bind='TLS_BEFORE_BIND'")
  })

  it('reads addresses', () => {
    expect([hostOf('127.0.0.1:3890'), portOf('127.0.0.1:3890', 1)]).toEqual(['127.0.0.1', 3890])
    expect([hostOf('[::1]:636'), portOf('[::1]:636', 1)]).toEqual(['::1', 636])
    expect(portOf(undefined, 3890)).toBe(3890)
  })
})

describe('LDAP view settings', () => {
  it('reads the ldap section defensively: absent or malformed keys give the defaults', () => {
    expect(ldapFormOf({})).toEqual({ ...LDAP_DEFAULTS, present: false, tls: false })
    expect(ldapFormOf({ ldap: { enabled: 'yes', searchRoles: ['admin', 3, 'ldap-reader'], idleTimeout: '9' } })).toEqual({
      ...LDAP_DEFAULTS,
      searchRoles: ['admin', 'ldap-reader'],
      present: true,
      tls: false,
    })
    expect(
      ldapFormOf({
        ldap: {
          enabled: true,
          address: '0.0.0.0:389',
          ldapsAddress: '0.0.0.0:636',
          baseDN: 'dc=acme,dc=test',
          searchRoles: [],
          allowMainPasswordWithSecondFactor: true,
          idleTimeout: 60,
          tls: { cert: '/etc/c.pem', key: '/etc/k.pem' },
        },
      }),
    ).toEqual({
      enabled: true,
      address: '0.0.0.0:389',
      ldapsAddress: '0.0.0.0:636',
      baseDN: 'dc=acme,dc=test',
      searchRoles: [],
      allowMainPasswordWithSecondFactor: true,
      idleTimeout: 60,
      present: true,
      tls: true,
    })
  })

  it('writes the ldap keys the config section names; an empty LDAPS address removes the key', () => {
    expect(ldapPatch({ ...LDAP_DEFAULTS, address: ' 0.0.0.0:3890 ', ldapsAddress: '  ' })).toEqual({
      ldap: {
        enabled: false,
        address: '0.0.0.0:3890',
        ldapsAddress: null,
        baseDN: 'dc=gatehouse,dc=lan',
        searchRoles: ['admin'],
        allowMainPasswordWithSecondFactor: false,
        idleTimeout: 300,
      },
    })
  })
})
