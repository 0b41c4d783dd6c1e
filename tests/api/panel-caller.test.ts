import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuditRow, queryAuditEvents } from '../../server/core/audit.js'
import type { PanelCaller } from '../../server/core/panel-caller.js'
import { findUserById } from '../../server/core/users.js'
import { createPanelService, type PanelService } from '../../server/panel/service.js'
import { signUp } from '../helpers/http.js'
import { silentLogger, startTestServer, type TestServer } from '../helpers/server.js'

/**
 * Issue 31 §1: a panel operation runs as its caller, and every audit event it records names
 * them as the actor: the admin who acted, never "the panel" and never the target user; a role
 * with some admin permissions reads and changes only what they allow. Both engines.
 */

let server: TestServer
let panel: PanelService
let ada: PanelCaller
let support: PanelCaller
let grace: { id: string; email: string }

const meta = { ipAddress: '127.0.0.1', userAgent: 'gatehouse-panel' }

async function callerFor(role: string | null, access: 'full' | 'limited'): Promise<PanelCaller> {
  const signedUp = await signUp(server.base)
  if (role) await ok('users.setRole', { userId: signedUp.user.id, role }, undefined)
  const row = await findUserById(server.gatehouse.ctx, signedUp.user.id)
  return { kind: 'admin', user: row!, access, meta }
}

async function ok<T>(op: string, input: unknown, caller: PanelCaller | undefined = ada): Promise<T> {
  const result = await panel.dispatch(op, input, caller)
  if (!result.ok) throw new Error(`${op}: ${result.error.code} ${result.error.message}`)
  return result.data as T
}

const latest = async (type: string): Promise<AuditRow | undefined> =>
  (await queryAuditEvents(server.gatehouse.ctx, { type }, { limit: 1 })).events[0]

const idOf = (caller: PanelCaller) => (caller.kind === 'admin' ? caller.user.id : null)

beforeAll(async () => {
  server = await startTestServer({ config: { apiKey: { enabled: true }, admin: { roles: { support: { user: ['list', 'get'] } } } } })
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
  ada = await callerFor('admin', 'full')
  support = await callerFor('support', 'limited')
  grace = (await signUp(server.base, { name: 'Grace' })).user
})
afterAll(async () => {
  await server.close()
})

describe('panel operations run as their caller', () => {
  it('an API key created for Grace by Ada names Ada as actor and Grace as target', async () => {
    await ok('apiKey.create', { userId: grace.id, name: 'for grace' })
    expect(await latest('api-key.created')).toMatchObject({ actorUserId: idOf(ada), targetUserId: grace.id, ipAddress: '127.0.0.1' })
  })

  it('user operations go through the admin rules as Ada, and are audited as her', async () => {
    await ok('users.ban', { userId: grace.id, banReason: 'testing' })
    expect(await latest('admin.ban-user')).toMatchObject({ actorUserId: idOf(ada), targetUserId: grace.id, outcome: 'success' })
    await ok('users.unban', { userId: grace.id })
    // The admin rules now know who acts: Ada cannot ban herself.
    const self = await panel.dispatch('users.ban', { userId: idOf(ada) }, ada)
    expect(self).toMatchObject({ ok: false, error: { code: 'YOU_CANNOT_BAN_YOURSELF', status: 400 } })
  })

  it('server.info says who runs the panel', async () => {
    expect(await ok('server.info', {})).toMatchObject({
      caller: { kind: 'admin', email: ada.kind === 'admin' ? ada.user.email : '', role: 'admin', access: 'full' },
    })
    expect(
      await ok('server.info', {}, { kind: 'os-account', account: 'alice', meta: { ipAddress: null, userAgent: 'gatehouse-desktop' } }),
    ).toMatchObject({ caller: { kind: 'os-account', name: 'alice', access: 'full' } })
  })

  it('the desktop OS account and the recovery link are named in detail.actor, the key owner as target', async () => {
    const desktop: PanelCaller = { kind: 'os-account', account: 'alice', meta: { ipAddress: null, userAgent: 'gatehouse-desktop' } }
    await ok('apiKey.create', { userId: grace.id, name: 'from the desktop' }, desktop)
    expect(await latest('api-key.created')).toMatchObject({
      actorUserId: null,
      targetUserId: grace.id,
      userAgent: 'gatehouse-desktop',
      detail: expect.objectContaining({ actor: 'os:alice' }),
    })
    await ok('users.verifyEmail', { userId: grace.id }, { kind: 'recovery', meta })
    expect(await latest('admin.set-email-verified')).toMatchObject({
      actorUserId: null,
      detail: expect.objectContaining({ actor: 'recovery-link' }),
    })
  })

  it('a limited role reads every view and changes only what its permissions allow', async () => {
    const listed = await ok<{ total: number }>('users.list', { limit: 10, offset: 0 }, support)
    expect(listed.total).toBeGreaterThan(2)
    expect(await ok('server.info', {}, support)).toMatchObject({ caller: { access: 'limited', role: 'support' } })
    const settings = await panel.dispatch('settings.update', { patch: { trustedOrigins: ['https://x.example'] } }, support)
    expect(settings).toMatchObject({ ok: false, error: { code: 'PANEL_FORBIDDEN', status: 403 } })
    expect(server.gatehouse.config.get().trustedOrigins).not.toContain('https://x.example')
    // Banning needs user:ban, which its role does not grant: refused before it runs (the rule
    // server.info tells the renderer, server/panel/permissions.ts), audited as support.
    const ban = await panel.dispatch('users.ban', { userId: grace.id }, support)
    expect(ban).toMatchObject({
      ok: false,
      error: { code: 'PANEL_FORBIDDEN', status: 403, message: 'Your role does not allow this (it needs the user:ban permission)' },
    })
    expect(await latest('panel.forbidden')).toMatchObject({ actorUserId: idOf(support), outcome: 'failure', target: 'users.ban' })
    expect((await ok<{ user: { banned: boolean | null } }>('users.get', { userId: grace.id })).user.banned).not.toBe(true)
    // What it is told it may change: nothing but the user changes its permissions' domain functions check per action.
    expect(await ok('server.info', {}, support)).toMatchObject({
      caller: { permissions: ['user:list', 'user:get'], changes: ['users.bulk'] },
    })
  })
})
