import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { type Socket, createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'ldapts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, warnSkipped } from '../../helpers/engines.js'
import { runCli } from '../../helpers/process.js'
import { BASE, type LdapServer, PASSWORD, type Person, ldapUtilsMissing, person, run, startLdapServer } from './helpers.js'

/** StartTLS on `ldap.address`, the LDAPS listener, and a listener that cannot start stopping start-up with one line. */

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-tls-'))
const cert = join(dir, 'cert.pem')
const key = join(dir, 'key.pem')
execFileSync(
  'openssl',
  ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-days', '1', '-keyout', key, '-out', cert],
  {
    stdio: 'ignore',
  },
)

let server: LdapServer
let alice: Person
let ldapsPort: number
beforeAll(async () => {
  ldapsPort = await freePort()
  server = await startLdapServer({ ldap: { tls: { cert, key }, ldapsAddress: `127.0.0.1:${ldapsPort}` } })
  alice = await person(server, 'alice', 'Alice Liddell', 'admin')
})
afterAll(async () => {
  await server?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('TLS', () => {
  it('StartTLS upgrades a plain connection; the root DSE offers it; LDAPS answers from the first byte', async () => {
    const plain = new Client({ url: server.url })
    const root = await plain.search('', { scope: 'base', attributes: ['supportedExtension'] })
    expect(root.searchEntries[0]?.supportedExtension).toContain('1.3.6.1.4.1.1466.20037')
    await plain.startTLS({ rejectUnauthorized: false })
    await plain.bind(alice.dn, PASSWORD)
    expect(await plain.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: `dn:${alice.dn}` })
    await plain.unbind()

    const ldaps = new Client({ url: `ldaps://127.0.0.1:${ldapsPort}`, tlsOptions: { rejectUnauthorized: false } })
    await ldaps.bind(alice.dn, PASSWORD)
    const { searchEntries } = await ldaps.search(`ou=people,${BASE}`, { scope: 'one', filter: '(uid=alice)', attributes: ['uid'] })
    expect(searchEntries.map((e) => e.uid)).toEqual(['alice'])
    await ldaps.unbind()
  })

  warnSkipped('LDAP: OpenLDAP command-line clients over TLS', ldapUtilsMissing)
  it.skipIf(!!ldapUtilsMissing)('ldapwhoami -ZZ (StartTLS required) and over ldaps://', async () => {
    const startTls = await run('ldapwhoami', ['-x', '-ZZ', '-H', server.url, '-D', alice.dn, '-w', PASSWORD])
    expect(startTls).toMatchObject({ code: 0, stdout: `dn:${alice.dn}\n` })
    const ldaps = await run('ldapwhoami', ['-x', '-H', `ldaps://127.0.0.1:${ldapsPort}`, '-D', alice.dn, '-w', PASSWORD])
    expect(ldaps).toMatchObject({ code: 0, stdout: `dn:${alice.dn}\n` })
  })
})

describe('start-up', () => {
  it('LDAPS counts a connection towards ldap.maxConnectionsPerAddress from its first byte, before the TLS handshake', async () => {
    // Before, LDAPS counted a connection only once its handshake was done: connections that never
    // began one were held (up to the handshake timeout, 2 minutes) without any limit.
    await server.gatehouse.config.update({ ldap: { maxConnectionsPerAddress: 4 } })
    const sockets: Socket[] = []
    try {
      const closed = new Set<number>()
      for (let i = 0; i < 8; i++) {
        const socket = createConnection({ host: '127.0.0.1', port: ldapsPort })
        socket.on('error', () => {})
        socket.on('close', () => closed.add(i))
        await new Promise((resolve) => socket.once('connect', resolve))
        sockets.push(socket)
      }
      for (let polls = 0; closed.size < 4 && polls < 100; polls++) await new Promise((resolve) => setTimeout(resolve, 100))
      expect([...closed].sort()).toEqual([4, 5, 6, 7])
      // Once they go, a real client connects.
      for (const socket of sockets) socket.destroy()
      const ldaps = new Client({ url: `ldaps://127.0.0.1:${ldapsPort}`, tlsOptions: { rejectUnauthorized: false } })
      for (let tries = 0; ; tries++) {
        const error = await ldaps.bind(alice.dn, PASSWORD).catch((e: Error) => e)
        if (!error) break
        if (tries > 50) throw error
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      await ldaps.unbind()
    } finally {
      for (const socket of sockets) socket.destroy()
      await server.gatehouse.config.update({ ldap: { maxConnectionsPerAddress: null } })
    }
  })

  it('a taken ldap.address stops `gatehouse serve` with one line naming the field', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const port = (taken.address() as { port: number }).port
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-taken-'))
    const config = join(dataDir, 'overrides.json')
    writeFileSync(config, JSON.stringify({ ldap: { enabled: true, address: `127.0.0.1:${port}` } }))
    try {
      const result = await runCli(['serve', '--port', '0', '--panel-port', '0', '--data-dir', dataDir, '--config', config], {
        GATEHOUSE_SECRET: 'process-test-secret-0123456789abcdef',
      })
      expect(result.code).toBe(2)
      expect(result.stderr).toBe(`gatehouse: ldap.address: cannot listen on 127.0.0.1:${port} (EADDRINUSE); choose another ldap.address\n`)
    } finally {
      taken.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('an unknown role in ldap.searchRoles is a configuration error naming the field', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-role-'))
    const config = join(dataDir, 'overrides.json')
    writeFileSync(config, JSON.stringify({ ldap: { enabled: true, searchRoles: ['admin', 'ldap-reader'] } }))
    try {
      const result = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--config', config], {
        GATEHOUSE_SECRET: 'process-test-secret-0123456789abcdef',
      })
      expect(result.code).toBe(2)
      expect(result.stderr).toMatch(/^gatehouse: .*ldap\.searchRoles: "ldap-reader" is not a known role/)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
