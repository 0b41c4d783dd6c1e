/**
 * Copy-paste LDAP settings for the apps teams connect most, with one Gatehouse's values filled in.
 * Pure functions (no React): the panel's LDAP view shows them, and docs/LDAP.md holds each one
 * rendered with DOC_VALUES (tests/features/app-passwords/ldap-recipes.test.ts checks they match, and
 * tests/features/ldap/recipes.test.ts runs them over TLS against the CA docs/LDAP.md makes).
 */

export interface LdapValues {
  /** The host name the apps use to reach Gatehouse's LDAP listener. */
  host: string
  /** Port of ldap.address (plain LDAP, StartTLS when ldap.tls is set). */
  port: number
  /** Port of ldap.ldapsAddress, when there is an LDAPS listener. */
  ldapsPort: number | null
  /** ldap.tls is set: StartTLS is offered on `port`. */
  startTls: boolean
  baseDN: string
  /** uid of the service user the apps bind as (a person whose role is in ldap.searchRoles). */
  serviceUid: string
}

export interface Recipe {
  id: string
  title: string
  /** Where it goes, in one line. */
  where: string
  text: (v: LdapValues) => string
}

/**
 * The values docs/LDAP.md's recipes are rendered with: StartTLS on the plain port (`ldap.tls` set),
 * which is what a LAN install configures (docs/LDAP.md "TLS").
 */
export const DOC_VALUES: LdapValues = {
  host: 'gatehouse.lan',
  port: 3890,
  ldapsPort: null,
  startTls: true,
  baseDN: 'dc=gatehouse,dc=lan',
  serviceUid: 'ldap-reader@gatehouse.lan',
}

/** What the service user's password stands for in every recipe: an app password of that user. */
export const BIND_PASSWORD = 'APP_PASSWORD_OF_THE_SERVICE_USER'

/**
 * Where every recipe expects the CA the administrator distributes (docs/LDAP.md "TLS"): Debian's and
 * Ubuntu's place for a local CA, so `update-ca-certificates` also puts it in the system store, which
 * the apps without a CA setting of their own (Gitea, Nextcloud's PHP, Jellyfin's .NET) trust.
 */
export const CA_FILE = '/usr/local/share/ca-certificates/gatehouse-ca.crt'

const people = (v: LdapValues) => `ou=people,${v.baseDN}`
const groups = (v: LdapValues) => `ou=groups,${v.baseDN}`
const bindDN = (v: LdapValues) => `uid=${v.serviceUid},${people(v)}`
/** LDAPS when there is a listener for it, else plain LDAP (with StartTLS where the app can ask for it). */
const secure = (v: LdapValues) => v.ldapsPort !== null
/** StartTLS on the plain port (no LDAPS listener, `ldap.tls` set). */
const startTls = (v: LdapValues) => !secure(v) && v.startTls
/** Any TLS at all: without it a recipe is plain LDAP, for an app on the same machine only (loopback). */
export const withTls = (v: LdapValues) => secure(v) || v.startTls
const port = (v: LdapValues) => (secure(v) ? (v.ldapsPort as number) : v.port)
const url = (v: LdapValues) => `${secure(v) ? 'ldaps' : 'ldap'}://${v.host}:${port(v)}`
const USER_FILTER = '(&(objectClass=person)(|(uid={0})(mail={0})))'
const userFilter = (placeholder: string) => USER_FILTER.replaceAll('{0}', placeholder)
/** The lines of `tls` when the server has TLS, else none. */
const ifTls = (v: LdapValues, ...lines: string[]) => (withTls(v) ? lines : [])
/** A shell comment naming the CA for an app that trusts the system store. */
const systemStore = (v: LdapValues) => ifTls(v, `# The CA: ${CA_FILE} on this machine, then (as root) update-ca-certificates`)

export const RECIPES: Recipe[] = [
  {
    id: 'jellyfin',
    title: 'Jellyfin',
    where: 'Dashboard → Plugins → LDAP Authentication (install the "LDAP Authentication" plugin first)',
    text: (v) =>
      [
        `LDAP Server: ${v.host}`,
        `LDAP Port: ${port(v)}`,
        `Secure LDAP: ${secure(v) ? 'on' : 'off'}`,
        `StartTls: ${startTls(v) ? 'on' : 'off'}`,
        ...ifTls(v, 'Skip SSL/TLS Verification: off', `LDAP Root CA Path: ${CA_FILE}`),
        `LDAP Bind User: ${bindDN(v)}`,
        `LDAP Bind User Password: ${BIND_PASSWORD}`,
        `LDAP Base DN for searches: ${people(v)}`,
        'LDAP Search Filter: (objectClass=person)',
        'LDAP Search Attributes: uid, mail',
        'LDAP Uid Attribute: uid',
        'LDAP Username Attribute: uid',
        `LDAP Admin Filter: (memberOf=cn=admin,${groups(v)})`,
      ].join('\n'),
  },
  {
    id: 'nextcloud',
    title: 'Nextcloud',
    where:
      'On the Nextcloud server, as the web server user (the "LDAP user and group backend" app enabled); PHP\'s LDAP trusts the system store (Debian\'s /etc/ldap/ldap.conf TLS_CACERT)',
    text: (v) =>
      [
        ...systemStore(v),
        'occ ldap:create-empty-config',
        ...[
          ['ldapHost', `${secure(v) ? 'ldaps://' : ''}${v.host}`],
          ['ldapPort', String(port(v))],
          ['ldapAgentName', bindDN(v)],
          ['ldapAgentPassword', BIND_PASSWORD],
          ['ldapBase', v.baseDN],
          ['ldapBaseUsers', people(v)],
          ['ldapBaseGroups', groups(v)],
          ['ldapUserFilter', '(objectClass=inetOrgPerson)'],
          ['ldapLoginFilter', userFilter('%uid')],
          ['ldapGroupFilter', '(objectClass=groupOfNames)'],
          ['ldapGroupMemberAssocAttr', 'member'],
          ['ldapUserDisplayName', 'cn'],
          ['ldapEmailAttribute', 'mail'],
          ['ldapExpertUsernameAttr', 'uid'],
          ['ldapExpertUUIDUserAttr', 'entryUUID'],
          ['ldapPagingSize', '500'],
          ['ldapTLS', startTls(v) ? '1' : '0'],
          ['ldapConfigurationActive', '1'],
        ].map(([key, value]) => `occ ldap:set-config s01 ${key} '${value}'`),
      ].join('\n'),
  },
  {
    id: 'gitea',
    title: 'Gitea / Forgejo',
    where:
      'On the Gitea server as its user (Forgejo: the same flags with `forgejo admin auth add-ldap`); Gitea trusts the system store, so never add --skip-tls-verify',
    text: (v) =>
      [
        ...systemStore(v),
        'gitea admin auth add-ldap \\',
        '  --name gatehouse \\',
        `  --security-protocol ${secure(v) ? 'ldaps' : v.startTls ? 'starttls' : 'unencrypted'} \\`,
        `  --host ${v.host} --port ${port(v)} \\`,
        `  --bind-dn '${bindDN(v)}' \\`,
        `  --bind-password '${BIND_PASSWORD}' \\`,
        `  --user-search-base '${people(v)}' \\`,
        `  --user-filter '${userFilter('%[1]s')}' \\`,
        `  --admin-filter '(memberOf=cn=admin,${groups(v)})' \\`,
        '  --username-attribute uid --firstname-attribute givenName \\',
        '  --surname-attribute sn --email-attribute mail \\',
        '  --synchronize-users',
      ].join('\n'),
  },
  {
    id: 'proxmox',
    title: 'Proxmox VE',
    where: 'On a Proxmox node as root (or Datacenter → Permissions → Realms → Add → LDAP Server: Mode, Verify Certificate)',
    text: (v) =>
      [
        'pveum realm add gatehouse --type ldap \\',
        `  --server1 ${v.host} --port ${port(v)} \\`,
        `  --mode ${secure(v) ? 'ldaps' : v.startTls ? 'ldap+starttls' : 'ldap'} \\`,
        ...ifTls(v, `  --verify 1 --capath ${CA_FILE} \\`),
        `  --base_dn '${people(v)}' --user_attr uid \\`,
        `  --bind_dn '${bindDN(v)}' --password '${BIND_PASSWORD}' \\`,
        `  --group_dn '${groups(v)}' --group_classes groupOfNames \\`,
        "  --user_classes inetOrgPerson --filter '(objectClass=person)' \\",
        "  --sync-defaults-options 'scope=both,enable-new=1'",
        'pveum realm sync gatehouse',
      ].join('\n'),
  },
  {
    id: 'portainer',
    title: 'Portainer',
    where: 'Settings → Authentication → LDAP → Custom',
    text: (v) =>
      [
        `LDAP Server: ${v.host}:${port(v)}`,
        'Anonymous mode: off',
        `Reader DN: ${bindDN(v)}`,
        `Password: ${BIND_PASSWORD}`,
        `Use StartTLS: ${startTls(v) ? 'on' : 'off'}`,
        `Use TLS: ${secure(v) ? 'on' : 'off'}`,
        ...ifTls(v, 'Skip verification of server certificate: off', `TLS CA certificate: ${CA_FILE} (upload it)`),
        `User search configurations → Base DN: ${people(v)}`,
        'User search configurations → Username attribute: uid',
        'User search configurations → Filter: (objectClass=person)',
        `Group search configurations → Group Base DN: ${groups(v)}`,
        'Group search configurations → Group Membership Attribute: member',
        'Group search configurations → Group Filter: (objectClass=groupOfNames)',
      ].join('\n'),
  },
  {
    id: 'synology',
    title: 'Synology DSM',
    where:
      'Control Panel → Domain/LDAP → LDAP → Join (the wizard takes no CA: the connection is encrypted, and whether DSM checks the certificate is up to DSM)',
    text: (v) =>
      [
        `Server address: ${v.host}`,
        `Encryption: ${secure(v) ? 'SSL/TLS' : v.startTls ? 'StartTLS' : 'None'}`,
        `Base DN: ${v.baseDN}`,
        'Profile: Custom',
        `Bind DN: ${bindDN(v)}`,
        `Password: ${BIND_PASSWORD}`,
        `Port (Advanced): ${port(v)}`,
        `Custom profile → filter passwd: (objectClass=person) · user base: ${people(v)}`,
        `Custom profile → filter group: (objectClass=groupOfNames) · group base: ${groups(v)}`,
      ].join('\n'),
  },
  {
    id: 'apache',
    title: 'Apache mod_authnz_ldap',
    where: 'Apache httpd (a2enmod ldap authnz_ldap): LDAPTrustedGlobalCert in the server config (not in a site), the rest in a site',
    text: (v) =>
      [
        ...ifTls(v, `LDAPTrustedGlobalCert CA_BASE64 ${CA_FILE}`),
        '<Location "/private">',
        '  AuthType Basic',
        '  AuthName "Gatehouse"',
        '  AuthBasicProvider ldap',
        `  AuthLDAPURL "${url(v)}/${people(v)}?uid?sub?(objectClass=person)"${startTls(v) ? ' TLS' : ''}`,
        `  AuthLDAPBindDN "${bindDN(v)}"`,
        `  AuthLDAPBindPassword "${BIND_PASSWORD}"`,
        '  AuthLDAPGroupAttribute member',
        '  AuthLDAPGroupAttributeIsDN on',
        `  Require ldap-group cn=admin,${groups(v)}`,
        '</Location>',
      ].join('\n'),
  },
  {
    id: 'sssd',
    title: 'SSSD (Linux sign-in)',
    where:
      '/etc/sssd/sssd.conf (mode 0600): the directory has no POSIX uid/gid numbers, so accounts stay local (proxy to files) and LDAP checks the password',
    text: (v) =>
      [
        '[sssd]',
        'services = nss, pam',
        'domains = gatehouse',
        '',
        '[domain/gatehouse]',
        'id_provider = proxy',
        'proxy_lib_name = files',
        'auth_provider = ldap',
        `ldap_uri = ${url(v)}`,
        `ldap_search_base = ${v.baseDN}`,
        `ldap_user_search_base = ${people(v)}`,
        'ldap_user_object_class = inetOrgPerson',
        'ldap_user_name = uid',
        `ldap_default_bind_dn = ${bindDN(v)}`,
        `ldap_default_authtok = ${BIND_PASSWORD}`,
        `ldap_id_use_start_tls = ${startTls(v) ? 'true' : 'false'}`,
        ...ifTls(v, 'ldap_tls_reqcert = demand', `ldap_tls_cacert = ${CA_FILE}`),
        'ldap_page_size = 500',
      ].join('\n'),
  },
  {
    id: 'grafana',
    title: 'Grafana',
    where: '/etc/grafana/ldap.toml, with `[auth.ldap] enabled = true` in grafana.ini',
    text: (v) =>
      [
        '[[servers]]',
        `host = "${v.host}"`,
        `port = ${port(v)}`,
        `use_ssl = ${withTls(v)}`,
        `start_tls = ${startTls(v)}`,
        ...ifTls(v, 'ssl_skip_verify = false', `root_ca_cert = "${CA_FILE}"`),
        `bind_dn = "${bindDN(v)}"`,
        `bind_password = '${BIND_PASSWORD}'`,
        `search_filter = "${userFilter('%s')}"`,
        `search_base_dns = ["${people(v)}"]`,
        '',
        '[servers.attributes]',
        'name = "givenName"',
        'surname = "sn"',
        'username = "uid"',
        'member_of = "memberOf"',
        'email = "mail"',
        '',
        '[[servers.group_mappings]]',
        `group_dn = "cn=admin,${groups(v)}"`,
        'org_role = "Admin"',
        '',
        '[[servers.group_mappings]]',
        'group_dn = "*"',
        'org_role = "Viewer"',
      ].join('\n'),
  },
  {
    id: 'ldapsearch',
    title: 'ldapsearch (OpenLDAP tools)',
    where: "From an app's machine, to check the CA, the service user and the search before configuring the app",
    text: (v) =>
      [
        ...ifTls(v, `LDAPTLS_CACERT=${CA_FILE} \\`),
        `ldapsearch -x${startTls(v) ? ' -ZZ' : ''} -H ${url(v)} \\`,
        `  -D '${bindDN(v)}' -w '${BIND_PASSWORD}' \\`,
        `  -b '${people(v)}' '(objectClass=person)' uid mail memberOf`,
      ].join('\n'),
  },
  {
    id: 'python',
    title: 'Python (ldap3)',
    where: 'A script of your own (python3-ldap3)',
    text: (v) =>
      [
        'import ssl',
        'from ldap3 import Connection, Server, Tls',
        '',
        ...ifTls(v, `tls = Tls(ca_certs_file='${CA_FILE}', validate=ssl.CERT_REQUIRED)`),
        `server = Server('${v.host}', port=${port(v)}${secure(v) ? ', use_ssl=True' : ''}${withTls(v) ? ', tls=tls' : ''})`,
        `conn = Connection(server, '${bindDN(v)}', '${BIND_PASSWORD}', auto_bind=${startTls(v) ? "'TLS_BEFORE_BIND'" : 'True'})`,
        `conn.search('${people(v)}', '(objectClass=person)', attributes=['uid', 'mail'])`,
        'for entry in conn.entries:',
        '    print(entry.entry_dn, entry.mail)',
      ].join('\n'),
  },
]

/** "host:port" → its port (the default when absent or unreadable). */
export function portOf(address: string | null | undefined, fallback: number): number {
  const match = /:(\d{1,5})$/.exec(address ?? '')
  return match ? Number(match[1]) : fallback
}

/** "host:port" → its host ("127.0.0.1:3890" → "127.0.0.1"; "[::1]:3890" → "::1"). */
export function hostOf(address: string | null | undefined): string {
  const value = (address ?? '').replace(/:\d{1,5}$/, '')
  return value.replace(/^\[(.*)\]$/, '$1')
}

/** docs/LDAP.md's block for one recipe: a heading, where it goes, and the text in a fence. */
export function docBlock(recipe: Recipe, values: LdapValues = DOC_VALUES): string {
  return `### ${recipe.title}\n\n${recipe.where}.\n\n\`\`\`\n${recipe.text(values)}\n\`\`\`\n`
}
