import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from 'ldapts'
import { setRole, systemActor } from '../../../server/features/admin/index.js'
import { ldapListening } from '../../../server/features/ldap/index.js'
import { freePort } from '../../helpers/engines.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { startTestServer, type TestServer, type TestServerOptions } from '../../helpers/server.js'

export const BASE = 'dc=gatehouse,dc=lan'
export const PASSWORD = 'correct horse battery'

/** Why OpenLDAP's command-line clients cannot run here (Debian `ldap-utils`), or undefined. */
export const ldapUtilsMissing = existsSync('/usr/bin/ldapsearch') ? undefined : 'no ldapsearch (install Debian\'s "ldap-utils" package)'

export interface LdapServer extends TestServer {
  url: string
  port: number
}

/** A test server with LDAP on a free loopback port. */
export async function startLdapServer(options: TestServerOptions & { ldap?: Record<string, unknown> } = {}): Promise<LdapServer> {
  const port = await freePort()
  const server = await startTestServer({
    ...options,
    config: { ...options.config, ldap: { enabled: true, address: `127.0.0.1:${port}`, ...options.ldap } },
  })
  const bound = await ldapListening(server.gatehouse.ctx)
  if (!bound) throw new Error('LDAP did not start')
  return { ...server, port: bound.address.port, url: `ldap://127.0.0.1:${bound.address.port}` }
}

export interface Person {
  id: string
  email: string
  username: string
  dn: string
}

/** A user signed up through the HTTP API (with a username), optionally given a role as the CLI does. */
export async function person(server: TestServer, username: string, name: string, role?: string): Promise<Person> {
  const up = await verifiedSignUp(server, { username, name, email: `${username}@example.com` })
  if (role) await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: up.user.id, role }, null)
  return { id: up.user.id, email: up.email, username, dn: `uid=${username},ou=people,${BASE}` }
}

export async function client(server: LdapServer, dn?: string, password = PASSWORD): Promise<Client> {
  const c = new Client({ url: server.url, timeout: 5_000, connectTimeout: 5_000 })
  if (dn) await c.bind(dn, password)
  return c
}

/** Runs an OpenLDAP tool; resolves with its exit code, stdout and stderr. */
export function run(
  tool: string,
  args: string[],
  input?: string,
  env: Record<string, string> = { LDAPTLS_REQCERT: 'never' },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(tool, args, { timeout: 20_000, env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    )
    if (input !== undefined) child.stdin?.end(input)
  })
}

/** The files docs/LDAP.md's "Make a CA and a server certificate" leaves in its directory. */
export interface LanCertificates {
  /** The CA the administrator hands out (ca.crt). */
  ca: string
  caKey: string
  /** Gatehouse's certificate and key, for `ldap.tls`. */
  cert: string
  key: string
}

/**
 * Runs docs/LDAP.md's "Make a CA and a server certificate" commands as written, in `dir`, with
 * only the example address (192.168.1.10) made 127.0.0.1, the address tests connect to: the CA a
 * LAN's apps trust and a server certificate it signs, as the docs make them.
 */
export function makeLanCertificates(dir: string): LanCertificates {
  const doc = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'LDAP.md'), 'utf8')
  const block = /### Make a CA and a server certificate\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(doc)?.[1]
  if (!block?.includes('IP:192.168.1.10'))
    throw new Error('docs/LDAP.md has no "Make a CA and a server certificate" block naming IP:192.168.1.10')
  execFileSync('sh', ['-e', '-c', block.replace('IP:192.168.1.10', 'IP:127.0.0.1')], { cwd: dir, stdio: 'pipe' })
  return { ca: join(dir, 'ca.crt'), caKey: join(dir, 'ca.key'), cert: join(dir, 'ldap.crt'), key: join(dir, 'ldap.key') }
}

export interface LdifEntry {
  dn: string
  attributes: { name: string; values: string[] }[]
}

/** `ldapsearch -LLL -o ldif_wrap=no` output as entries, attributes in the order printed (base64 values decoded). */
export function parseLdif(stdout: string): LdifEntry[] {
  const entries: LdifEntry[] = []
  for (const block of stdout.split(/\n\n+/)) {
    // A comment (`# pagedresults: cookie=…`) may be folded onto lines that begin with a space (RFC 2849).
    const lines: string[] = []
    let inComment = false
    for (const line of block.split('\n')) {
      if (line.startsWith('#')) inComment = true
      else if (!(inComment && line.startsWith(' '))) inComment = false
      if (!inComment && line !== '') lines.push(line)
    }
    if (lines.length === 0) continue
    const pairs = lines.map((line) => {
      const at = line.indexOf(':')
      const name = line.slice(0, at)
      const value =
        line[at + 1] === ':' ? Buffer.from(line.slice(at + 2).trim(), 'base64').toString('utf8') : line.slice(at + 1).replace(/^ /, '')
      return { name, value }
    })
    const [first, ...rest] = pairs
    if (first?.name !== 'dn') throw new Error(`not an LDIF entry: ${block}`)
    const attributes: LdifEntry['attributes'] = []
    for (const { name, value } of rest) {
      const last = attributes.at(-1)
      if (last?.name === name) last.values.push(value)
      else attributes.push({ name, values: [value] })
    }
    entries.push({ dn: first.value, attributes })
  }
  return entries
}

/** `ldapsearch` as an app would run it: simple bind, one search; its exit code is the LDAP result code. */
export function ldapsearch(
  server: { url: string },
  search: { bindDN: string; password: string; base: string; scope: string; filter: string; attributes?: string[]; sizeLimit?: number },
) {
  const bind = search.bindDN ? ['-D', search.bindDN, '-w', search.password] : []
  return run('/usr/bin/ldapsearch', [
    '-x',
    '-LLL',
    '-o',
    'ldif_wrap=no',
    '-H',
    server.url,
    ...bind,
    '-b',
    search.base,
    '-s',
    search.scope,
    ...(search.sizeLimit ? ['-z', String(search.sizeLimit)] : []),
    search.filter,
    ...(search.attributes ?? []),
  ])
}
