import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { connect, createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PanelCaller } from '../../../server/core/panel-caller.js'
import { ldapListening } from '../../../server/features/ldap/index.js'
import { metricsListening } from '../../../server/features/metrics/index.js'
import type { PanelService } from '../../../server/panel/service.js'
import { freePort, warnSkipped } from '../../helpers/engines.js'
import { adminCaller, panelServiceOf } from '../../helpers/panel-session.js'
import { serverLog, startTestServer } from '../../helpers/server.js'
import {
  BASE,
  client,
  type LdapServer,
  ldapsearch,
  ldapUtilsMissing,
  makeLanCertificates,
  PASSWORD,
  type Person,
  person,
  run,
} from './helpers.js'

/**
 * Issue 50 §2, on both engines: a new LDAP or metrics address is bound before the old listener
 * closes. A save naming a port another process holds is refused with the reason (the address and
 * the OS error), nothing is stored and the old listener keeps answering `ldapsearch`; a free port
 * moves the listener (the new one answers, the old port refuses connections). `listeners.state`
 * reports each listener's state, address, open connections and last error.
 */

let server: LdapServer
let panel: PanelService
let admin: PanelCaller & { kind: 'admin' }
let alice: Person
let metricsPort = 0
const occupied: Server[] = []

beforeAll(async () => {
  // Switched on through the panel (a start-up option would win over its saves): both apply live.
  const started = await startTestServer()
  panel = panelServiceOf(started)
  admin = await adminCaller(started, `root-${Date.now()}@example.com`)
  metricsPort = await freePort()
  const on = await panel.dispatch(
    'settings.update',
    {
      patch: {
        ldap: { enabled: true, address: `127.0.0.1:${await freePort()}` },
        metrics: { enabled: true, address: `127.0.0.1:${metricsPort}` },
      },
    },
    admin,
  )
  if (!on.ok) throw new Error(on.error.message)
  // Applied live (onConfigChange): wait, bounded, for the listener it opens.
  let bound: Awaited<ReturnType<typeof ldapListening>>
  for (let i = 0; i < 100 && !bound; i++) {
    bound = await ldapListening(started.gatehouse.ctx)
    if (!bound) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  if (!bound) throw new Error('LDAP did not start')
  server = { ...started, port: bound.address.port, url: `ldap://127.0.0.1:${bound.address.port}` }
  alice = await person(server, 'alice', 'Alice Liddell')
  await metricsListening(server.gatehouse.ctx)
}, 60_000)
afterAll(async () => {
  for (const s of occupied) s.close()
  await server?.close()
})

warnSkipped('listeners: ldapsearch', ldapUtilsMissing)

/** A loopback port another listener (this test's, not Gatehouse's) holds. */
async function busyPort(): Promise<number> {
  const holder = createServer()
  occupied.push(holder)
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
  const at = holder.address()
  if (!at || typeof at !== 'object') throw new Error('no port')
  return at.port
}

const save = (patch: Record<string, unknown>) => panel.dispatch('settings.update', { patch }, admin)

type State = { name: string; state: string; address: string | null; connections: number; lastError: { message: string; at: number } | null }
async function states(): Promise<Record<string, State>> {
  const answer = await panel.dispatch('listeners.state', {}, admin)
  if (!answer.ok) throw new Error(answer.error.message)
  return Object.fromEntries((answer.data as { listeners: State[] }).listeners.map((l) => [l.name, l]))
}

/** Alice's entry, as `ldapsearch` gets it from `port`. */
const search = (port: number) =>
  ldapsearch({ url: `ldap://127.0.0.1:${port}` }, { bindDN: alice.dn, password: PASSWORD, base: BASE, scope: 'sub', filter: '(uid=alice)' })

/** Whether a TCP connection to the port is accepted. */
const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })

const ldapPort = async () => (await ldapListening(server.gatehouse.ctx))?.address.port ?? 0

describe.skipIf(ldapUtilsMissing)('LDAP listener: a save binds the new address first', () => {
  it('a port in use is refused with the reason; nothing is stored and the old listener still answers ldapsearch', async () => {
    const before = await ldapPort()
    const stored = JSON.stringify(server.gatehouse.config.storedLayer())
    const effective = server.gatehouse.ctx.config().ldap.address
    const busy = await busyPort()
    const answer = await save({ ldap: { address: `127.0.0.1:${busy}` } })
    expect(answer.ok).toBe(false)
    if (answer.ok) return
    expect(answer.error.code).toBe('LISTENER_NOT_BOUND')
    expect(answer.error.message).toContain(`ldap.address: cannot listen on 127.0.0.1:${busy} (EADDRINUSE)`)
    expect(answer.error.issues).toEqual([{ path: 'ldap.address', message: expect.stringContaining('EADDRINUSE') }])
    // Nothing stored, nothing changed.
    expect(JSON.stringify(server.gatehouse.config.storedLayer())).toBe(stored)
    expect(server.gatehouse.ctx.config().ldap.address).toBe(effective)
    expect(await ldapPort()).toBe(before)
    // The old listener answers, after the change would have applied.
    await new Promise((resolve) => setTimeout(resolve, 200))
    const found = await search(before)
    expect(found.code).toBe(0)
    expect(found.stdout).toContain(`dn: ${alice.dn}`)
    // Its state: listening on the old address, with the refusal as its last error.
    const ldap = (await states()).ldap
    expect(ldap).toMatchObject({ state: 'listening', address: `127.0.0.1:${before}` })
    expect(ldap?.lastError?.message).toContain(`127.0.0.1:${busy} (EADDRINUSE)`)
    expect(ldap?.lastError?.at).toBeGreaterThan(0)
  })

  it('a free port moves the listener: the new one answers ldapsearch, the old port refuses connections', async () => {
    const before = await ldapPort()
    const port = await freePort()
    const answer = await save({ ldap: { address: `127.0.0.1:${port}` } })
    expect(answer.ok).toBe(true)
    await expect.poll(() => ldapPort(), { timeout: 10_000 }).toBe(port)
    const found = await search(port)
    expect(found.code).toBe(0)
    expect(found.stdout).toContain(`dn: ${alice.dn}`)
    await expect.poll(() => accepts(before), { timeout: 10_000 }).toBe(false)
    expect(server.gatehouse.ctx.config().ldap.address).toBe(`127.0.0.1:${port}`)
    expect((await states()).ldap).toMatchObject({ state: 'listening', address: `127.0.0.1:${port}` })
  })

  it('listeners.state counts the open LDAP connections', async () => {
    // The searches above have hung up.
    await expect.poll(async () => (await states()).ldap?.connections, { timeout: 5_000 }).toBe(0)
    const c = await client({ ...server, url: `ldap://127.0.0.1:${await ldapPort()}` }, alice.dn)
    await expect.poll(async () => (await states()).ldap?.connections, { timeout: 5_000 }).toBe(1)
    await c.unbind()
    await expect.poll(async () => (await states()).ldap?.connections, { timeout: 5_000 }).toBe(0)
  })

  it('switched off: stopped, nothing listens; on again: listening', async () => {
    const port = await ldapPort()
    expect((await save({ ldap: { enabled: false } })).ok).toBe(true)
    await expect.poll(async () => (await states()).ldap?.state, { timeout: 10_000 }).toBe('stopped')
    expect(await accepts(port)).toBe(false)
    expect((await states()).ldap?.address).toBeNull()
    expect((await save({ ldap: { enabled: true } })).ok).toBe(true)
    await expect.poll(async () => (await states()).ldap?.state, { timeout: 10_000 }).toBe('listening')
    expect((await search(port)).code).toBe(0)
  })
})

describe.skipIf(ldapUtilsMissing)('LDAPS beside LDAP: each address bound first, an unchanged one kept', () => {
  const ldaps = (port: number, host = '127.0.0.1') =>
    ldapsearch(
      { url: `ldaps://${host}:${port}` },
      { bindDN: alice.dn, password: PASSWORD, base: BASE, scope: 'sub', filter: '(uid=alice)' },
    )
  const ldapsPort = async () => (await ldapListening(server.gatehouse.ctx))?.ldaps?.port ?? 0

  it('LDAPS switched on keeps the plain listener (its address is ours); a busy LDAPS port is refused; moving LDAP keeps LDAPS', async () => {
    const certs = makeLanCertificates(mkdtempSync(join(tmpdir(), 'gatehouse-listeners-')))
    const plain = await ldapPort()
    const first = await freePort()
    const on = await save({ ldap: { tls: { cert: certs.cert, key: certs.key }, ldapsAddress: `127.0.0.1:${first}`, requireTLS: false } })
    expect(on.ok ? 'saved' : on.error.message).toBe('saved')
    await expect.poll(() => ldapsPort(), { timeout: 10_000 }).toBe(first)
    expect(await ldapPort()).toBe(plain)
    expect((await ldaps(first)).code).toBe(0)
    expect((await search(plain)).code).toBe(0)
    // The plain listener, kept, serves the new settings: StartTLS with the certificate just set.
    const startTls = await run('/usr/bin/ldapwhoami', ['-x', '-ZZ', '-H', `ldap://127.0.0.1:${plain}`, '-D', alice.dn, '-w', PASSWORD])
    expect(startTls.stdout.trim()).toBe(`dn:${alice.dn}`)

    // Another process holds the port asked for LDAPS: refused, both keep serving.
    const busy = await busyPort()
    const refused = await save({ ldap: { ldapsAddress: `127.0.0.1:${busy}` } })
    expect(refused.ok ? 'saved' : refused.error.message).toContain(`ldap.ldapsAddress: cannot listen on 127.0.0.1:${busy} (EADDRINUSE)`)
    expect(server.gatehouse.ctx.config().ldap.ldapsAddress).toBe(`127.0.0.1:${first}`)
    expect((await ldaps(first)).code).toBe(0)
    expect((await search(plain)).code).toBe(0)
    const after = await states()
    expect(after.ldaps).toMatchObject({ state: 'listening', address: `127.0.0.1:${first}` })
    expect(after.ldaps?.lastError?.message).toContain('EADDRINUSE')

    // The plain listener moves; LDAPS, on its unchanged address, keeps answering.
    const moved = await freePort()
    expect((await save({ ldap: { address: `127.0.0.1:${moved}` } })).ok).toBe(true)
    await expect.poll(() => ldapPort(), { timeout: 10_000 }).toBe(moved)
    expect(await ldapsPort()).toBe(first)
    expect((await ldaps(first)).code).toBe(0)
    expect((await search(moved)).code).toBe(0)
    await expect.poll(() => accepts(plain), { timeout: 10_000 }).toBe(false)
  })
})

describe.skipIf(ldapUtilsMissing)('a change applied otherwise (a reload of config.json): never nothing listening', () => {
  /** Edits DATA_DIR/config.json's `ldap` as by hand and reloads it, as SIGHUP does. */
  const reloadWith = (ldap: Record<string, unknown>) => {
    const file = join(server.dataDir, 'config.json')
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { ldap: Record<string, unknown> }
    writeFileSync(file, JSON.stringify({ ...stored, ldap: { ...stored.ldap, ...ldap } }))
    server.gatehouse.config.reloadFile()
  }

  it('an address in use: the old listener keeps answering (its state says why); switched on with nothing to keep: failed', async () => {
    const before = await ldapPort()
    const busy = await busyPort()
    const refusal = `ldap.address: cannot listen on 127.0.0.1:${busy} (EADDRINUSE); choose another ldap.address`
    serverLog.allowError(new RegExp(`^${refusal.replace(/[.()]/g, '\\$&')}`))
    reloadWith({ address: `127.0.0.1:${busy}` })
    expect(server.gatehouse.ctx.config().ldap.address).toBe(`127.0.0.1:${busy}`)
    await expect
      .poll(async () => (await states()).ldap?.lastError?.message ?? '', { timeout: 10_000 })
      .toContain(`127.0.0.1:${busy} (EADDRINUSE)`)
    expect((await states()).ldap).toMatchObject({ state: 'listening', address: `127.0.0.1:${before}` })
    expect((await search(before)).code).toBe(0)
    // The log says so, and that the old listener serves.
    expect(serverLog.entries.map((e) => e.message)).toContain(`${refusal} (the LDAP listeners keep serving on their addresses)`)

    reloadWith({ enabled: false, address: `127.0.0.1:${before}` })
    await expect.poll(async () => (await states()).ldap?.state, { timeout: 10_000 }).toBe('stopped')
    reloadWith({ enabled: true, address: `127.0.0.1:${busy}` })
    await expect.poll(() => serverLog.entries.map((e) => e.message), { timeout: 10_000 }).toContain(refusal)
    expect((await states()).ldap).toMatchObject({ state: 'failed', address: `127.0.0.1:${busy}` })
    // A save that leaves the listener's settings alone is not refused for it (the change retries the bind, logged again).
    serverLog.allowError(new RegExp(`^${refusal.replace(/[.()]/g, '\\$&')}`))
    const other = await save({ ldap: { idleTimeout: 400 } })
    expect(other.ok ? 'saved' : other.error.message).toBe('saved')
    // Moved to a free address, it listens again.
    const port = await freePort()
    reloadWith({ address: `127.0.0.1:${port}` })
    await expect.poll(async () => (await states()).ldap?.state, { timeout: 10_000 }).toBe('listening')
    expect((await search(port)).code).toBe(0)
  })
})

describe('metrics listener: a save binds the new address first', () => {
  const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).status

  it('a port in use is refused with the reason; nothing is stored and the old listener still serves /metrics', async () => {
    const stored = JSON.stringify(server.gatehouse.config.storedLayer())
    const busy = await busyPort()
    const answer = await save({ metrics: { address: `127.0.0.1:${busy}` } })
    expect(answer.ok).toBe(false)
    if (answer.ok) return
    expect(answer.error.code).toBe('LISTENER_NOT_BOUND')
    expect(answer.error.message).toContain(`metrics.address: cannot listen on 127.0.0.1:${busy} (EADDRINUSE)`)
    expect(JSON.stringify(server.gatehouse.config.storedLayer())).toBe(stored)
    expect(server.gatehouse.ctx.config().metrics.address).toBe(`127.0.0.1:${metricsPort}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(await scrape(metricsPort)).toBe(200)
    const metrics = (await states()).metrics
    expect(metrics).toMatchObject({ state: 'listening', address: `127.0.0.1:${metricsPort}` })
    expect(metrics?.lastError?.message).toContain('EADDRINUSE')
  })

  it('a free port moves it: the new one serves /metrics, the old port refuses connections', async () => {
    const port = await freePort()
    const moved = await save({ metrics: { address: `127.0.0.1:${port}` } })
    expect(moved.ok ? 'saved' : moved.error.message).toBe('saved')
    await expect.poll(async () => (await states()).metrics?.address, { timeout: 10_000 }).toBe(`127.0.0.1:${port}`)
    expect(await scrape(port)).toBe(200)
    await expect.poll(() => accepts(metricsPort), { timeout: 10_000 }).toBe(false)
    expect((await metricsListening(server.gatehouse.ctx))?.port).toBe(port)
    metricsPort = port
  })

  it('an address not on this machine is refused (EADDRNOTAVAIL), nothing stored', async () => {
    const answer = await save({ metrics: { address: '192.0.2.1:9959' } })
    expect(answer.ok).toBe(false)
    if (!answer.ok) expect(answer.error.message).toContain('metrics.address: cannot listen on 192.0.2.1:9959 (EADDRNOTAVAIL)')
    expect(server.gatehouse.ctx.config().metrics.address).toBe(`127.0.0.1:${metricsPort}`)
    expect(await scrape(metricsPort)).toBe(200)
  })
})
