import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { Client } from 'ldapts'
import { setRole, systemActor } from '../../../server/features/admin/index.js'
import { ldapListening } from '../../../server/features/ldap/index.js'
import { freePort } from '../../helpers/engines.js'
import { signUp } from '../../helpers/http.js'
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
  const up = await signUp(server.base, { username, name, email: `${username}@example.com` })
  if (role) await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: up.user.id, role }, null)
  return { id: up.user.id, email: up.email, username, dn: `uid=${username},ou=people,${BASE}` }
}

export async function client(server: LdapServer, dn?: string, password = PASSWORD): Promise<Client> {
  const c = new Client({ url: server.url, timeout: 5_000, connectTimeout: 5_000 })
  if (dn) await c.bind(dn, password)
  return c
}

/** Runs an OpenLDAP tool; resolves with its exit code, stdout and stderr. */
export function run(tool: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(tool, args, { timeout: 20_000, env: { ...process.env, LDAPTLS_REQCERT: 'never' } }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    )
    if (input !== undefined) child.stdin?.end(input)
  })
}
