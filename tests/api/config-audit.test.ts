import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuditRow, queryAuditEvents } from '../../server/core/audit.js'
import type { PanelCaller } from '../../server/core/panel-caller.js'
import { configAuditSettled } from '../../server/core/config-audit.js'
import { findUserById } from '../../server/core/users.js'
import { createPanelService, type PanelService } from '../../server/panel/service.js'
import { signUp } from '../helpers/http.js'
import { backupServiceOf } from '../../server/features/backup/service.js'
import { silentLogger, sqliteOnly, startTestServer, TestClock, type TestServer } from '../helpers/server.js'

/**
 * Issue 31 §2: every configuration change is audited with who, when and the changed keys,
 * secrets masked, whether it comes from the panel (as the signed-in admin), from the running
 * server, or from the config file and command line found at start. Both engines.
 */

let server: TestServer
let panel: PanelService
let ada: PanelCaller

const panelOf = (s: TestServer) =>
  createPanelService({
    gatehouse: s.gatehouse,
    apiURL: () => s.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })

async function ok<T>(op: string, input: unknown, caller: PanelCaller | undefined = ada): Promise<T> {
  const result = await panel.dispatch(op, input, caller)
  if (!result.ok) throw new Error(`${op}: ${result.error.code} ${result.error.message}`)
  return result.data as T
}

const configEvents = async (s: TestServer = server): Promise<AuditRow[]> =>
  (await queryAuditEvents(s.gatehouse.ctx, { type: 'config.changed' })).events

beforeAll(async () => {
  server = await startTestServer()
  panel = panelOf(server)
  const signedUp = await signUp(server.base, { name: 'Ada Admin' })
  await ok('users.setRole', { userId: signedUp.user.id, role: 'admin' }, undefined)
  const row = await findUserById(server.gatehouse.ctx, signedUp.user.id)
  ada = { kind: 'admin', user: row!, access: 'full', meta: { ipAddress: '127.0.0.1', userAgent: 'gatehouse-panel' } }
})
afterAll(async () => {
  await server.close()
})

describe('configuration changes leave a trail', () => {
  it('a panel change names the admin, when, and the changed keys with their old and new values', async () => {
    const before = (await configEvents()).length
    server.clock.advance(1_000)
    await ok('settings.update', { patch: { trustedOrigins: ['https://app.example.com'], session: { expiresIn: 3600 } } })
    const events = await configEvents()
    expect(events).toHaveLength(before + 1)
    const [event] = events
    expect(event).toMatchObject({
      type: 'config.changed',
      outcome: 'success',
      actorUserId: ada.kind === 'admin' ? ada.user.id : null,
      ipAddress: '127.0.0.1',
      userAgent: 'gatehouse-panel',
    })
    expect(event?.createdAt.getTime()).toBe(server.clock.now())
    expect(event?.detail).toEqual({
      via: 'panel',
      keys: ['session.expiresIn', 'trustedOrigins'],
      changes: [
        { key: 'session.expiresIn', from: 604800, to: 3600 },
        { key: 'trustedOrigins', from: [], to: ['https://app.example.com'] },
      ],
    })
    // The Audit view filters them: by type, and by the admin who acted.
    const listed = await ok<{ events: AuditRow[]; total: number }>('audit.list', { type: 'config.*', limit: 50, offset: 0 })
    expect(listed.events.every((e) => e.type.startsWith('config.'))).toBe(true)
    expect(listed.total).toBe(before + 1)
    const byAda = await ok<{ events: AuditRow[] }>('audit.list', {
      type: 'config.changed',
      user: ada.kind === 'admin' ? ada.user.email : '',
      limit: 50,
      offset: 0,
    })
    expect(byAda.events.map((e) => e.id)).toContain(event?.id)
  })

  it('SMTP, provider credentials and switches: secrets never reach the log', async () => {
    await ok('email.update', {
      host: 'smtp.example.com',
      port: 2525,
      secure: false,
      user: 'mailer',
      password: 'smtp-pass-XYZZY',
      from: 'a@example.com',
    })
    await ok('providers.update', {
      id: 'github',
      enabled: true,
      clientId: 'gh-client',
      clientSecret: 'gh-secret-PLUGH',
      scopes: ['user:email'],
      trustedForLinking: false,
      overrides: {},
    })
    await ok('settings.update', { patch: { emailAndPassword: { requireEmailVerification: true } } })
    const events = await configEvents()
    const text = JSON.stringify(events)
    expect(text).not.toContain('smtp-pass-XYZZY')
    expect(text).not.toContain('gh-secret-PLUGH')
    // Sealed values are secrets too: not even their ciphertext is logged.
    expect(text).not.toMatch(/sealed|hmac:/)
    const [switched, provider, smtp] = events
    expect(smtp?.detail).toMatchObject({ via: 'panel' })
    expect((smtp?.detail as { changes: unknown[] } | undefined)?.changes).toEqual(
      expect.arrayContaining([
        { key: 'mail.smtp.host', from: null, to: 'smtp.example.com' },
        { key: 'mail.smtp.password', from: null, to: '(secret)' },
      ]),
    )
    expect((provider?.detail as { changes: unknown[] } | undefined)?.changes).toEqual(
      expect.arrayContaining([
        { key: 'socialProviders.github.enabled', from: null, to: true },
        { key: 'socialProviders.github.clientSecret', from: null, to: '(secret)' },
      ]),
    )
    expect(switched?.detail).toMatchObject({ keys: ['emailAndPassword.requireEmailVerification'] })
    for (const event of [switched, provider, smtp]) expect(event?.actorUserId).toBe(ada.kind === 'admin' ? ada.user.id : null)

    // A new secret is a change even though both values show masked.
    await ok('providers.update', {
      id: 'github',
      enabled: true,
      clientId: 'gh-client',
      clientSecret: 'gh-secret-ANOTHER',
      scopes: ['user:email'],
      trustedForLinking: false,
      overrides: {},
    })
    const [rotated] = await configEvents()
    expect(rotated?.detail).toMatchObject({ changes: [{ key: 'socialProviders.github.clientSecret', from: '(secret)', to: '(secret)' }] })
  })

  it('a generic OAuth provider is audited without its secret, in the log and its export; API-key settings show their values', async () => {
    await ok('genericOAuth.save', {
      providerId: 'corp',
      name: 'Corp SSO',
      discoveryUrl: '',
      authorizationUrl: 'https://idp.example.com/authorize',
      tokenUrl: 'https://idp.example.com/token',
      userInfoUrl: '',
      clientId: 'corp-client',
      clientSecret: 'corp-secret-FROTZ',
      scopes: ['openid'],
      pkce: true,
    })
    const sealed = (server.gatehouse.config.storedLayer() as { genericOAuth: { config: { clientSecret: string }[] } }).genericOAuth
      .config[0]?.clientSecret as string
    expect(sealed).toMatch(/^enc:v1:/)
    const [generic] = await configEvents()
    const change = (generic?.detail as { changes: { key: string; to: { clientId: string; clientSecret: string }[] }[] } | undefined)
      ?.changes[0]
    expect(change?.key).toBe('genericOAuth.config')
    expect(change?.to[0]).toMatchObject({ providerId: 'corp', clientId: 'corp-client', clientSecret: '(secret)' })
    await ok('settings.update', { patch: { apiKey: { enabled: true, defaultKeyLength: 48 } } })
    const [apiKey] = await configEvents()
    expect((apiKey?.detail as { changes: unknown[] } | undefined)?.changes).toEqual([
      { key: 'apiKey.defaultKeyLength', from: 64, to: 48 },
      { key: 'apiKey.enabled', from: false, to: true },
    ])
    for (const format of ['csv', 'json'] as const) {
      const exported = await ok<{ content: string }>('audit.export', { format, type: 'config.*' })
      expect(exported.content).toContain('corp-client')
      for (const leak of ['corp-secret-FROTZ', sealed, ...sealed.slice('enc:v1:'.length).split('.')])
        expect(exported.content).not.toContain(leak)
    }
  })

  it('the backup schedule and the OIDC token lifetimes are configuration too', async () => {
    await ok('backup.schedule', { schedule: 'daily', keep: 3 })
    const [schedule] = await configEvents()
    expect(schedule?.detail).toMatchObject({ keys: expect.arrayContaining(['backup.schedule']) })
    await ok('settings.update', { patch: { oidcProvider: { ttl: { accessToken: 600 } } } })
    const [oidc] = await configEvents()
    expect(oidc?.detail).toMatchObject({ changes: [{ key: 'oidcProvider.ttl.accessToken', from: 3600, to: 600 }] })
  })

  it('a change made outside the panel is audited as the server; an unchanged save leaves no event', async () => {
    const before = (await configEvents()).length
    server.gatehouse.config.update({ rateLimit: { window: 30 } })
    // The audit write of a change made in-process is in flight: wait for it, not for a turn of the loop.
    await configAuditSettled(server.gatehouse.ctx)
    const [event] = await configEvents()
    expect(event).toMatchObject({ actorUserId: null, detail: { via: 'server', keys: ['rateLimit.window'] } })
    await ok('settings.update', { patch: { rateLimit: { window: 30 } } })
    expect(await configEvents()).toHaveLength(before + 1)
  })

  it('a change found at start (config file, flags) is audited once, as the OS account, secrets masked', async () => {
    const clock = new TestClock()
    const first = await startTestServer({ clock, keepData: true })
    expect(existsSync(join(first.dataDir, 'config.audited.json'))).toBe(true)
    // A fresh data directory: what it starts with is the baseline, not a change.
    expect(await configEvents(first)).toHaveLength(0)
    await first.close()

    const config = {
      trustedOrigins: ['https://start.example.com'],
      mail: { smtp: { url: 'smtp://mailer:flag-pass-QUUX@smtp.example.com:2525' } },
    }
    const second = await startTestServer({ clock, dataDir: first.dataDir, keepData: true, config })
    const events = await configEvents(second)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ actorUserId: null, detail: { via: 'start', actor: expect.stringMatching(/^os:/) } })
    expect(JSON.stringify(events)).not.toContain('flag-pass-QUUX')
    expect((events[0]?.detail as { changes: unknown[] } | undefined)?.changes).toEqual(
      expect.arrayContaining([
        { key: 'trustedOrigins', from: [], to: ['https://start.example.com'] },
        { key: 'mail.smtp.url', from: null, to: 'smtp://mailer:***@smtp.example.com:2525' },
      ]),
    )
    await second.close()

    // The same options again: nothing changed, nothing audited.
    const third = await startTestServer({ clock, dataDir: first.dataDir, config })
    expect(await configEvents(third)).toHaveLength(1)
    await third.close()
  })

  sqliteOnly('a restore staged in the panel is audited as the admin, and the restored data records it at its first start', async () => {
    const own = await startTestServer({ keepData: true })
    const ownPanel = panelOf(own)
    const admin = await signUp(own.base, { name: 'Restorer' })
    await ownPanel.dispatch('users.setRole', { userId: admin.user.id, role: 'admin' })
    const row = await findUserById(own.gatehouse.ctx, admin.user.id)
    const caller: PanelCaller = {
      kind: 'admin',
      user: row!,
      access: 'full',
      meta: { ipAddress: '127.0.0.1', userAgent: 'gatehouse-panel' },
    }
    const run = async <T>(op: string, input: unknown): Promise<T> => {
      const result = await ownPanel.dispatch(op, input, caller)
      if (!result.ok) throw new Error(`${op}: ${result.error.code}`)
      return result.data as T
    }
    const started = await run<{ name: string }>('backup.create', {})
    await backupServiceOf(own.gatehouse.ctx)?.settle()
    await run('backup.restore', { name: started.name, confirm: started.name })
    const [staged] = (await queryAuditEvents(own.gatehouse.ctx, { type: 'backup.restore-staged' })).events
    expect(staged).toMatchObject({ actorUserId: admin.user.id, target: started.name })
    await own.close()

    const restored = await startTestServer({ dataDir: own.dataDir })
    try {
      await expect
        .poll(async () => (await queryAuditEvents(restored.gatehouse.ctx, { type: 'backup.restored' })).events[0])
        .toMatchObject({ actorUserId: admin.user.id, target: started.name, detail: { via: 'panel', actor: admin.email } })
    } finally {
      await restored.close()
    }
  })
})
