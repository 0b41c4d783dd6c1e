import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import type { PanelResult } from '../../server/panel/contract.js'
import { queryAuditEvents } from '../../server/core/audit.js'
import { createPanelService } from '../../server/panel/service.js'
import { silentLogger, startTestServer, type TestServer } from '../helpers/server.js'
import { FakeFrame, FakeWebContents, fakeElectron, state } from './fake-electron.js'

vi.mock('electron', async () => (await import('./fake-electron.js')).fakeElectron)

const { OPEN_EXTERNAL_CHANNEL, desktopOperator, registerPanelIpc, trustedSenderCheck } = await import('../../main/ipc.js')
const { hardenContents, sameAppURL, windowOptions } = await import('../../main/window.js')
const { loadOrCreateSecret } = await import('../../main/secrets.js')

const APP_URL = 'file:///opt/gatehouse/out/renderer/index.html'
const event = (frame: FakeFrame | null) => ({ senderFrame: frame }) as unknown as IpcMainInvokeEvent

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => {
  state.handlers.clear()
  state.exposed.clear()
  vi.mocked(fakeElectron.shell.openExternal).mockClear()
})

function register(operator?: ReturnType<typeof desktopOperator>) {
  const mainFrame = new FakeFrame(APP_URL)
  const service = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'desktop',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
    ...(operator ? { operator } : {}),
  })
  registerPanelIpc(
    fakeElectron.ipcMain as unknown as Pick<IpcMain, 'handle' | 'removeHandler'>,
    service,
    trustedSenderCheck(() => mainFrame as never, sameAppURL(APP_URL)),
  )
  const invoke = (channel: string, frame: FakeFrame | null, input?: unknown) =>
    state.handlers.get(channel)!(event(frame), input) as Promise<PanelResult>
  return { mainFrame, invoke }
}

/**
 * The IPC channels main must register, written out (not derived from the production contract):
 * one per panel operation, plus open-external. A new panel operation adds its line here.
 */
const EXPECTED_CHANNELS = [
  'gatehouse:apiKey.configure',
  'gatehouse:apiKey.create',
  'gatehouse:apiKey.delete',
  'gatehouse:apiKey.list',
  'gatehouse:apiKey.setEnabled',
  'gatehouse:apiKey.settings',
  'gatehouse:appPasswords.list',
  'gatehouse:appPasswords.revoke',
  'gatehouse:audit.export',
  'gatehouse:audit.exportPage',
  'gatehouse:audit.list',
  'gatehouse:audit.types',
  'gatehouse:backup.create',
  'gatehouse:backup.delete',
  'gatehouse:backup.list',
  'gatehouse:backup.restore',
  'gatehouse:backup.restorePlan',
  'gatehouse:backup.schedule',
  'gatehouse:backup.status',
  'gatehouse:email.get',
  'gatehouse:email.message',
  'gatehouse:email.outbox',
  'gatehouse:email.preview',
  'gatehouse:email.resetTemplate',
  'gatehouse:email.retry',
  'gatehouse:email.saveTemplate',
  'gatehouse:email.sendTest',
  'gatehouse:email.templates',
  'gatehouse:email.update',
  'gatehouse:forwardAuth.get',
  'gatehouse:forwardAuth.save',
  'gatehouse:forwardAuth.test',
  'gatehouse:genericOAuth.list',
  'gatehouse:genericOAuth.remove',
  'gatehouse:genericOAuth.save',
  'gatehouse:groups.configure',
  'gatehouse:groups.impact',
  'gatehouse:groups.nameProblems',
  'gatehouse:groups.organizationImpact',
  'gatehouse:groups.roleImpact',
  'gatehouse:groups.settings',
  'gatehouse:import.start',
  'gatehouse:import.status',
  'gatehouse:import.upload',
  'gatehouse:jwt.configure',
  'gatehouse:jwt.keys',
  'gatehouse:jwt.rotate',
  'gatehouse:jwt.settings',
  'gatehouse:ldap.test',
  'gatehouse:listeners.state',
  'gatehouse:network.apply',
  'gatehouse:network.check',
  'gatehouse:network.get',
  'gatehouse:oidc.clients',
  'gatehouse:oidc.configure',
  'gatehouse:oidc.createClient',
  'gatehouse:oidc.createRegistrationToken',
  'gatehouse:oidc.deleteClient',
  'gatehouse:oidc.registrationTokens',
  'gatehouse:oidc.revokeRegistrationToken',
  'gatehouse:oidc.revokeUserApp',
  'gatehouse:oidc.rotateSecret',
  'gatehouse:oidc.settings',
  'gatehouse:oidc.updateClient',
  'gatehouse:oidc.userApps',
  'gatehouse:open-external',
  'gatehouse:orgs.cancelInvitation',
  'gatehouse:orgs.create',
  'gatehouse:orgs.createTeam',
  'gatehouse:orgs.get',
  'gatehouse:orgs.invite',
  'gatehouse:orgs.list',
  'gatehouse:orgs.removeMember',
  'gatehouse:orgs.removeTeam',
  'gatehouse:orgs.renameTeam',
  'gatehouse:orgs.updateMemberRole',
  'gatehouse:overview.get',
  'gatehouse:passkey.remove',
  'gatehouse:providers.list',
  'gatehouse:providers.testResult',
  'gatehouse:providers.testSignIn',
  'gatehouse:providers.update',
  'gatehouse:saml.createServiceProvider',
  'gatehouse:saml.deleteServiceProvider',
  'gatehouse:saml.fetchMetadata',
  'gatehouse:saml.serviceProviders',
  'gatehouse:saml.updateServiceProvider',
  'gatehouse:security.locks',
  'gatehouse:security.unlock',
  'gatehouse:server.info',
  'gatehouse:settings.get',
  'gatehouse:settings.update',
  'gatehouse:settings.validate',
  'gatehouse:twoFactor.overview',
  'gatehouse:twoFactor.reset',
  'gatehouse:twoFactor.resetGrace',
  'gatehouse:twoFactor.setEnforcement',
  'gatehouse:twoFactor.userFactors',
  'gatehouse:users.ban',
  'gatehouse:users.create',
  'gatehouse:users.get',
  'gatehouse:users.impersonationLink',
  'gatehouse:users.inviteToSignUp',
  'gatehouse:users.list',
  'gatehouse:users.remove',
  'gatehouse:users.revokeSession',
  'gatehouse:users.revokeSessions',
  'gatehouse:users.setPassword',
  'gatehouse:users.setRole',
  'gatehouse:users.unban',
  'gatehouse:users.verifyEmail',
  'gatehouse:users.roles',
  'gatehouse:users.update',
  'gatehouse:users.sendPasswordReset',
  'gatehouse:users.sendVerification',
  'gatehouse:users.sendSetUpLink',
  'gatehouse:users.unlock',
  'gatehouse:users.bulk',
  'gatehouse:orgs.update',
  'gatehouse:orgs.remove',
  'gatehouse:orgs.addMember',
  'gatehouse:orgs.setTeamMembers',
].sort()

describe('main: IPC registration of the panel contract', () => {
  it('registers one handler per contract operation, plus open-external, and nothing else', () => {
    register()
    expect([...state.handlers.keys()].sort()).toEqual(EXPECTED_CHANNELS)
  })

  it('answers a call from the app window through the same domain as the HTTP API', async () => {
    const { mainFrame, invoke } = register()
    const info = await invoke('gatehouse:server.info', mainFrame, {})
    expect(info).toMatchObject({ ok: true, data: { apiURL: server.base, mode: 'desktop', version: 'test' } })
    const overview = await invoke('gatehouse:overview.get', mainFrame, { range: 'days' })
    expect(overview.ok).toBe(true)
    if (overview.ok) expect((overview.data as { activity: unknown[] }).activity).toHaveLength(14)
  })

  it('acts as the OS account running the app: the audit log names it for user actions and config changes', async () => {
    expect(desktopOperator()).toMatchObject({ kind: 'os-account', account: userInfo().username })
    const { mainFrame, invoke } = register(desktopOperator('alice'))
    expect(await invoke('gatehouse:server.info', mainFrame, {})).toMatchObject({
      ok: true,
      data: { caller: { kind: 'os-account', name: 'alice', access: 'full' } },
    })
    const created = await invoke('gatehouse:users.create', mainFrame, {
      name: 'Desk Top',
      email: 'desk.top@example.com',
      password: 'correct horse battery',
    })
    expect(created.ok).toBe(true)
    const userId = created.ok ? (created.data as { user: { id: string } }).user.id : ''
    const [made] = (await queryAuditEvents(server.gatehouse.ctx, { type: 'admin.create-user' }, { limit: 1 })).events
    expect(made).toMatchObject({
      actorUserId: null,
      targetUserId: userId,
      userAgent: 'gatehouse-desktop',
      detail: expect.objectContaining({ actor: 'os:alice' }),
    })
    const saved = await invoke('gatehouse:settings.update', mainFrame, { patch: { session: { updateAge: 7200 } } })
    expect(saved.ok).toBe(true)
    const [change] = (await queryAuditEvents(server.gatehouse.ctx, { type: 'config.changed' }, { limit: 1 })).events
    expect(change).toMatchObject({
      actorUserId: null,
      detail: { via: 'panel', actor: 'os:alice', changes: [{ key: 'session.updateAge', from: 86400, to: 7200 }] },
    })
    server.gatehouse.config.update({ session: { updateAge: 86400 } })
  })

  it('validates every input against the contract before any domain code runs', async () => {
    const { mainFrame, invoke } = register()
    const before = server.gatehouse.config.get()
    const cases: Array<[string, unknown, string]> = [
      ['gatehouse:settings.update', { patch: 'not an object' }, 'patch'],
      ['gatehouse:settings.update', { patch: {}, extra: true }, ''],
      ['gatehouse:audit.list', { limit: 100_000 }, 'limit'],
      ['gatehouse:overview.get', { range: 'weeks' }, 'range'],
      ['gatehouse:users.ban', { userId: '' }, 'userId'],
      ['gatehouse:users.create', null, 'name'],
    ]
    for (const [channel, input, path] of cases) {
      const result = await invoke(channel, mainFrame, input)
      expect(result.ok, `${channel} ${JSON.stringify(input)}`).toBe(false)
      if (!result.ok) {
        expect(result.error.code).toBe('VALIDATION_ERROR')
        expect(result.error.status).toBe(400)
        if (path) expect(result.error.issues?.[0]?.path).toBe(path)
      }
    }
    // A valid shape that breaks a config rule is refused by the config schema, with the field named.
    const bad = await invoke('gatehouse:settings.update', mainFrame, { patch: { trustedOrigins: [''] } })
    expect(bad).toMatchObject({
      ok: false,
      error: { code: 'INVALID_CONFIG', issues: [{ path: 'trustedOrigins.0', message: 'a trusted origin must not be empty' }] },
    })
    expect(server.gatehouse.config.get()).toEqual(before)
  })

  it('refuses senders other than the main frame of the app window', async () => {
    const { mainFrame, invoke } = register()
    const forbidden = { ok: false, error: { code: 'FORBIDDEN_SENDER', status: 403 } }
    // A subframe (an iframe inside the window), even one showing the app's own page.
    expect(await invoke('gatehouse:server.info', new FakeFrame(APP_URL, mainFrame), {})).toMatchObject(forbidden)
    // Another top-level frame (another window or web contents).
    expect(await invoke('gatehouse:server.info', new FakeFrame(APP_URL), {})).toMatchObject(forbidden)
    // No frame at all (the frame went away).
    expect(await invoke('gatehouse:server.info', null, {})).toMatchObject(forbidden)
    // The main frame after it navigated elsewhere.
    mainFrame.url = 'https://evil.example/'
    expect(await invoke('gatehouse:users.create', mainFrame, { name: 'x', email: 'x@x.io', password: 'p' })).toMatchObject(forbidden)
    expect(await invoke(OPEN_EXTERNAL_CHANNEL, mainFrame, 'https://example.com')).toBe(false)
    expect(fakeElectron.shell.openExternal).not.toHaveBeenCalled()
    // Back on the app page (another view is a hash route): accepted.
    mainFrame.url = `${APP_URL}#/users`
    expect((await invoke('gatehouse:server.info', mainFrame, {})).ok).toBe(true)
  })

  it('opens only http(s) links externally', async () => {
    const { mainFrame, invoke } = register()
    expect(await invoke(OPEN_EXTERNAL_CHANNEL, mainFrame, 'file:///etc/passwd')).toBe(false)
    expect(await invoke(OPEN_EXTERNAL_CHANNEL, mainFrame, 'javascript:alert(1)')).toBe(false)
    expect(await invoke(OPEN_EXTERNAL_CHANNEL, mainFrame, 'https://user:pw@example.com/')).toBe(false)
    expect(fakeElectron.shell.openExternal).not.toHaveBeenCalled()
    expect(await invoke(OPEN_EXTERNAL_CHANNEL, mainFrame, 'https://github.com/settings/developers')).toBe(true)
    expect(fakeElectron.shell.openExternal).toHaveBeenCalledWith('https://github.com/settings/developers')
  })

  it('settings.get never carries a secret, not even the password of an SMTP URL whose user is an email', async () => {
    const own = await startTestServer({
      config: {
        mail: { smtp: { url: 'smtp://me@gmail.com:hunter2-smtp@smtp.gmail.com:587' } },
        socialProviders: { github: { clientId: 'gh-id', clientSecret: 'gh-secret-value' } },
      },
    })
    try {
      const service = createPanelService({
        gatehouse: own.gatehouse,
        apiURL: () => own.base,
        mode: 'desktop',
        version: 'test',
        startedAt: Date.now(),
        logger: silentLogger,
      })
      const result = await service.dispatch('settings.get', {})
      expect(result.ok).toBe(true)
      const text = JSON.stringify(result)
      expect(text).not.toContain('hunter2')
      expect(text).not.toContain('gh-secret-value')
      expect(text).not.toContain(own.gatehouse.ctx.secret)
      if (result.ok) {
        const { effective } = result.data as {
          effective: { mail: { smtp: { url: string } }; socialProviders: { github: Record<string, unknown> } }
        }
        expect(effective.mail.smtp.url).toBe('smtp://me@gmail.com@smtp.gmail.com:587')
        expect(effective.socialProviders.github.clientId).toBe('gh-id')
        expect(effective.socialProviders.github).not.toHaveProperty('clientSecret')
      }
    } finally {
      await own.close()
    }
  })
})

describe('main: window security', () => {
  it('sets isolation, sandbox and no Node integration', () => {
    const options = windowOptions('/app/out/preload/index.cjs')
    expect(options.webPreferences).toMatchObject({
      preload: '/app/out/preload/index.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    })
  })

  it('blocks navigation and new windows to other origins; http(s) goes to the browser', () => {
    const contents = new FakeWebContents(APP_URL)
    hardenContents(contents as unknown as WebContents, sameAppURL(APP_URL))
    const navigate = (url: string) => {
      const e = { preventDefault: vi.fn() }
      contents.emit('will-navigate', e, url)
      return e.preventDefault.mock.calls.length > 0
    }
    expect(navigate(`${APP_URL}#/audit`)).toBe(false)
    expect(navigate('https://evil.example/phish')).toBe(true)
    expect(fakeElectron.shell.openExternal).toHaveBeenCalledWith('https://evil.example/phish')
    expect(navigate('file:///etc/passwd')).toBe(true)
    expect(fakeElectron.shell.openExternal).toHaveBeenCalledTimes(1)

    expect(contents.windowOpenHandler?.({ url: 'https://docs.example/' })).toEqual({ action: 'deny' })
    expect(fakeElectron.shell.openExternal).toHaveBeenLastCalledWith('https://docs.example/')
    expect(contents.windowOpenHandler?.({ url: APP_URL })).toEqual({ action: 'deny' })
    expect(contents.windowOpenHandler?.({ url: 'smb://share/x' })).toEqual({ action: 'deny' })
    expect(fakeElectron.shell.openExternal).toHaveBeenCalledTimes(2)

    const webview = { preventDefault: vi.fn() }
    contents.emit('will-attach-webview', webview)
    expect(webview.preventDefault).toHaveBeenCalled()
  })
})

describe('preload', () => {
  it('exposes one frozen window.gatehouse bridge mapped onto the contract channels', async () => {
    await import('../../preload/index.js')
    const bridge = state.exposed.get('gatehouse') as {
      transport: string
      call(op: string, input: unknown): Promise<PanelResult>
      openExternal(url: string): Promise<void>
    }
    expect([...state.exposed.keys()]).toEqual(['gatehouse'])
    expect(Object.isFrozen(bridge)).toBe(true)
    expect(bridge.transport).toBe('ipc')
    const invoke = vi.mocked(fakeElectron.ipcRenderer.invoke)
    for (const channel of EXPECTED_CHANNELS.filter((c) => c !== 'gatehouse:open-external')) {
      const op = channel.slice('gatehouse:'.length)
      invoke.mockClear()
      await bridge.call(op, { probe: op })
      expect(invoke).toHaveBeenCalledWith(channel, { probe: op })
    }
    invoke.mockClear()
    const refused = await bridge.call('../../etc', {})
    expect(refused).toMatchObject({ ok: false, error: { code: 'UNKNOWN_OPERATION' } })
    expect(invoke).not.toHaveBeenCalled()
    await bridge.openExternal('https://example.com/')
    expect(invoke).toHaveBeenCalledWith('gatehouse:open-external', 'https://example.com/')
  })
})

describe('main: auth secret at rest', () => {
  it('is encrypted with safeStorage, migrated from a plaintext file, or 0600 plaintext without a keychain', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-secret-'))
    try {
      const first = await loadOrCreateSecret(dir, fakeElectron.safeStorage)
      expect(first.storage).toBe('safeStorage')
      expect(first.secret.length).toBeGreaterThanOrEqual(43)
      const onDisk = readFileSync(join(dir, 'secret.enc'), 'utf8')
      expect(onDisk).not.toContain(first.secret)
      expect(statSync(join(dir, 'secret.enc')).mode & 0o777).toBe(0o600)
      expect((await loadOrCreateSecret(dir, fakeElectron.safeStorage)).secret).toBe(first.secret)

      const legacy = mkdtempSync(join(tmpdir(), 'gatehouse-secret-'))
      writeFileSync(join(legacy, 'secret'), 'legacy-plaintext-secret\n')
      expect(await loadOrCreateSecret(legacy, fakeElectron.safeStorage)).toMatchObject({
        secret: 'legacy-plaintext-secret',
        storage: 'safeStorage',
        changed: true,
      })
      expect(existsSync(join(legacy, 'secret'))).toBe(false)
      rmSync(legacy, { recursive: true })

      state.encryptionAvailable = false
      const plain = mkdtempSync(join(tmpdir(), 'gatehouse-secret-'))
      const result = await loadOrCreateSecret(plain, fakeElectron.safeStorage)
      expect(result.storage).toBe('file')
      expect(readFileSync(join(plain, 'secret'), 'utf8').trim()).toBe(result.secret)
      expect(statSync(join(plain, 'secret')).mode & 0o777).toBe(0o600)
      await expect(loadOrCreateSecret(dir, fakeElectron.safeStorage)).rejects.toMatchObject({
        name: 'SecretError',
        kind: 'unavailable',
        sealed: true,
        message: expect.stringMatching(/keyring.*not available now/),
      })
      rmSync(plain, { recursive: true })
    } finally {
      state.encryptionAvailable = true
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('main: desktop app lifecycle', () => {
  it('starts the server in-process under userData, one hardened window, tray, and quits cleanly', async () => {
    const userData = mkdtempSync(join(tmpdir(), 'gatehouse-userdata-'))
    state.userData = userData
    const saved = { ...process.env }
    process.env.GATEHOUSE_PORT = '0'
    delete process.env.GATEHOUSE_DATA_DIR
    delete process.env.GATEHOUSE_SECRET
    try {
      const { startDesktop } = await import('../../main/app.js')
      const desktop = await startDesktop()
      expect(desktop).not.toBeNull()
      const gatehouse = desktop!.gatehouse
      const apiURL = gatehouse.ctx.baseURL
      expect((await fetch(`${apiURL}/ok`)).status).toBe(200)
      expect(gatehouse.database.location).toBe(join(userData, 'data', 'gatehouse.db'))
      expect(existsSync(join(userData, 'data', 'secret.enc'))).toBe(true)
      expect(existsSync(join(userData, 'data', 'secret'))).toBe(false)

      expect(state.windows).toHaveLength(1)
      const win = state.windows[0]!
      expect(win.options.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false })
      expect(String((win.options.webPreferences as { preload: string }).preload)).toMatch(/out\/preload\/index\.cjs$|preload\/index\.cjs$/)
      expect(win.loaded).toMatch(/renderer\/index\.html$/)
      expect([...state.handlers.keys()].sort()).toEqual(EXPECTED_CHANNELS)

      // The window's own main frame may call; the result comes from the in-process server.
      const info = (await state.handlers.get('gatehouse:server.info')!(event(win.webContents.mainFrame), {})) as PanelResult
      expect(info).toMatchObject({ ok: true, data: { apiURL, mode: 'desktop', version: '9.9.9-test' } })

      const tray = state.trays[0]!
      const labels = tray.menu.map((i) => i.label).filter(Boolean)
      expect(labels).toEqual(['Show Gatehouse', 'Copy API URL', 'Quit Gatehouse'])
      tray.menu.find((i) => i.label === 'Copy API URL')!.click!()
      expect(state.clipboard).toBe(apiURL)

      // Single instance: a second launch shows the existing window.
      win.hide()
      fakeElectron.app.emit('second-instance')
      expect(win.visible).toBe(true)

      // Quit: before-quit holds the quit until the server has closed, then quits for real.
      const prevented = fakeElectron.app.quit()
      expect(prevented).toBe(true)
      await vi.waitFor(() => expect(state.quitCalls).toBe(2))
      expect(gatehouse.database.sqlite?.open).toBe(false)
      await expect(fetch(`${apiURL}/ok`)).rejects.toThrow()
    } finally {
      process.env = saved
      rmSync(userData, { recursive: true, force: true })
    }
  })

  it('a second instance quits at once', async () => {
    vi.resetModules()
    state.singleInstance = false
    const before = state.quitCalls
    const { startDesktop } = await import('../../main/app.js')
    expect(await startDesktop()).toBeNull()
    expect(state.quitCalls).toBe(before + 1)
    state.singleInstance = true
  })
})
