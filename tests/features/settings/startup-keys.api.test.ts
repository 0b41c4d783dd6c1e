import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readServeOptions } from '../../../server/cli.js'
import { leafPaths, startupKeyFor, startupKeysOf } from '../../../server/config/startup.js'
import type { PanelCaller } from '../../../server/core/panel-caller.js'
import type { PanelService } from '../../../server/panel/service.js'
import { adminCaller, panelServiceOf } from '../../helpers/panel-session.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 50 §3: keys set at start-up, in every operation that stores configuration. `settings.get`
 * names each key with its source (the `--config` file, a flag, a GATEHOUSE_* variable); a save that
 * leaves them out (what every view now sends) is stored and takes effect while the start-up value
 * stays in effect and unstored; a save naming one is refused with 409 SET_AT_STARTUP, its message
 * naming the source, by every operation (Settings/LDAP, groups, Single sign-on, two-factor
 * enforcement), where the groups and registration switches used to be stored without effect.
 */

const CONFIG_FILE = '/etc/gatehouse/startup.json'
const SOURCE = `--config ${CONFIG_FILE}`

let server: TestServer
let panel: PanelService
let admin: PanelCaller

beforeAll(async () => {
  server = await startTestServer({
    config: {
      ldap: { baseDN: 'dc=startup,dc=lan' },
      groups: { teams: false },
      oidcProvider: { registration: { enabled: true } },
      twoFactor: { enforcement: { gracePeriod: 172_800 } },
      signUp: { mode: 'open' },
    },
    configSources: [
      { path: '', source: SOURCE },
      { path: 'rateLimit.enabled', source: 'GATEHOUSE_RATE_LIMIT' },
    ],
  })
  panel = panelServiceOf(server)
  admin = await adminCaller(server, `startup-${Date.now()}@example.com`)
})
afterAll(() => server?.close())

async function ok(op: string, input: unknown): Promise<Record<string, unknown>> {
  const answer = (await panel.dispatch(op as never, input as never, admin)) as { ok: boolean; data?: unknown; error?: unknown }
  expect(answer, `${op} ${JSON.stringify(input)}`).toMatchObject({ ok: true })
  return answer.data as Record<string, unknown>
}

async function refused(op: string, input: unknown, path: string): Promise<void> {
  const answer = (await panel.dispatch(op as never, input as never, admin)) as { ok: boolean; error?: { message: string } }
  expect(answer, `${op} ${JSON.stringify(input)}`).toMatchObject({
    ok: false,
    error: { status: 409, code: 'SET_AT_STARTUP', issues: [{ path }] },
  })
  expect(answer.error?.message).toContain(`set at start-up by ${SOURCE}`)
}

const config = () => server.gatehouse.config.get()
const stored = () => server.gatehouse.config.storedLayer() as Record<string, Record<string, unknown> | undefined>

describe('keys set at start-up, in every operation that stores configuration', () => {
  it('settings.get names each key with its source', async () => {
    const got = await ok('settings.get', {})
    expect(got.startup).toEqual(
      expect.arrayContaining([
        { path: 'ldap.baseDN', source: SOURCE },
        { path: 'groups.teams', source: SOURCE },
        { path: 'oidcProvider.registration.enabled', source: SOURCE },
        { path: 'twoFactor.enforcement.gracePeriod', source: SOURCE },
        { path: 'signUp.mode', source: SOURCE },
        { path: 'rateLimit.enabled', source: 'GATEHOUSE_RATE_LIMIT' },
      ]),
    )
    expect(got.overridden).toEqual(expect.arrayContaining(['ldap.baseDN', 'groups.teams', 'rateLimit.enabled']))
  })

  it('LDAP (settings.update): the other fields save and apply; the start-up key is refused and stays in effect', async () => {
    const read = await ok('settings.get', {})
    const idle = ((read.effective as { ldap: { idleTimeout: number } }).ldap.idleTimeout ?? 300) + 5
    await ok('settings.update', { patch: { ldap: { idleTimeout: idle } }, base: { 'ldap.idleTimeout': idle - 5 } })
    expect(config().ldap.idleTimeout).toBe(idle)
    expect(config().ldap.baseDN).toBe('dc=startup,dc=lan')
    expect(stored().ldap).toEqual({ idleTimeout: idle })
    await refused('settings.update', { patch: { ldap: { baseDN: 'dc=other,dc=lan' } } }, 'ldap.baseDN')
    // A patch naming the whole section would touch it too.
    await refused('settings.update', { patch: { ldap: null } }, 'ldap.baseDN')
    expect(config().ldap.baseDN).toBe('dc=startup,dc=lan')
  })

  it('groups: another switch saves; the start-up switch is refused (it used to be stored without effect) and never stored', async () => {
    await ok('groups.configure', { patch: { roles: false }, base: { 'groups.roles': true } })
    expect(config().groups.roles).toBe(false)
    expect(config().groups.teams).toBe(false)
    expect(stored().groups).not.toHaveProperty('teams')
    await refused('groups.configure', { patch: { teams: true } }, 'groups.teams')
    expect(config().groups.teams).toBe(false)
    expect(stored().groups).not.toHaveProperty('teams')
    await ok('groups.configure', { patch: { roles: true } })
  })

  it('Single sign-on: the lifetimes save; the registration switch set at start-up is refused, not stored without effect', async () => {
    await ok('oidc.configure', { patch: { ttl: { accessToken: 1800 } } })
    expect(config().oidcProvider.ttl.accessToken).toBe(1800)
    await refused('oidc.configure', { patch: { registration: { enabled: false } } }, 'oidcProvider.registration.enabled')
    expect(config().oidcProvider.registration.enabled).toBe(true)
    expect(stored().oidcProvider).not.toHaveProperty('registration')
  })

  it('two-factor enforcement: the roles save alone; the grace period set at start-up is refused', async () => {
    await ok('twoFactor.setEnforcement', { roles: ['admin'] })
    expect(config().twoFactor.enforcement).toEqual({ roles: ['admin'], gracePeriod: 172_800 })
    await refused('twoFactor.setEnforcement', { roles: ['admin'], gracePeriod: 86_400 }, 'twoFactor.enforcement.gracePeriod')
    expect(config().twoFactor.enforcement.gracePeriod).toBe(172_800)
    expect((stored().twoFactor as { enforcement: object }).enforcement).toEqual({ roles: ['admin'] })
  })

  it('registration: signUp.mode set at start-up is refused', async () => {
    await refused('settings.update', { patch: { signUp: { mode: 'invitation' } } }, 'signUp.mode')
    expect(config().signUp.mode).toBe('open')
  })
})

describe('gatehouse serve names the source of each start-up key', () => {
  it('the --config file by its flag or variable, and each flag or variable that stands for a key', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gatehouse-startup-keys-')), 'startup.json')
    writeFileSync(file, JSON.stringify({ ldap: { baseDN: 'dc=startup,dc=lan' } }))
    const byFlag = readServeOptions(['--config', file, '--rate-limit', 'off'], { GATEHOUSE_METRICS_ADDRESS: '127.0.0.1:9959' })
    expect(byFlag.configSources).toEqual([
      { path: '', source: `--config ${file}` },
      { path: 'rateLimit.enabled', source: '--rate-limit' },
      { path: 'metrics', source: 'GATEHOUSE_METRICS_ADDRESS' },
    ])
    const byVariable = readServeOptions([], { GATEHOUSE_CONFIG: file, GATEHOUSE_TRUSTED_ORIGINS: 'https://app.example.lan' })
    expect(byVariable.configSources).toEqual([
      { path: '', source: `the config file ${file} (GATEHOUSE_CONFIG)` },
      { path: 'trustedOrigins', source: 'GATEHOUSE_TRUSTED_ORIGINS' },
    ])
  })

  it('each leaf of the layer takes the source of the last part that set it; an empty object sets nothing', () => {
    const layer = { ldap: { baseDN: 'dc=x', tls: {} }, rateLimit: { enabled: false, max: 5 }, trustedOrigins: ['https://a.lan'] }
    const keys = startupKeysOf(layer, [
      { path: '', source: '--config f.json' },
      { path: 'rateLimit.enabled', source: '--rate-limit' },
    ])
    expect(keys).toEqual([
      { path: 'ldap.baseDN', source: '--config f.json' },
      { path: 'rateLimit.enabled', source: '--rate-limit' },
      { path: 'rateLimit.max', source: '--config f.json' },
      { path: 'trustedOrigins', source: '--config f.json' },
    ])
    // A path names a key it is, holds or lies under; a sibling with a common prefix is another key.
    expect(startupKeyFor(keys, 'ldap')?.path).toBe('ldap.baseDN')
    expect(startupKeyFor(keys, 'trustedOrigins.0')?.path).toBe('trustedOrigins')
    expect(startupKeyFor(keys, 'ldap.baseDNs')).toBeUndefined()
    expect(startupKeyFor(keys, 'ldap.tls')).toBeUndefined()
    // Without a source named (a library user, the tests' helper): said generically.
    expect(startupKeysOf({ a: 1 }, [])).toEqual([{ path: 'a', source: 'a start-up option' }])
    expect(leafPaths({ database: {} }, '', true)).toEqual(['database'])
  })
})
