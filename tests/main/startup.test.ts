import { sqliteOf } from '../helpers/server.js'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { IpcMainInvokeEvent, MenuItemConstructorOptions, WebContents } from 'electron'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { channelOf, type PanelResult } from '../../server/panel/contract.js'
import { PANEL_CSP } from '../../server/panel/http.js'
import { type FakeBrowserWindow, fakeElectron, resetState, state } from './fake-electron.js'

vi.mock('electron', async () => (await import('./fake-electron.js')).fakeElectron)

/**
 * The desktop app's start-up as a user meets it, against the fake `electron`: every failure ends in
 * a native dialog saying what happened and what to do, then the app goes on or quits (exit code 1,
 * which releases the single-instance lock), never a process without window or tray.
 */
const { startDesktop, applicationMenu } = await import('../../main/app.js')
const { windowOptions } = await import('../../main/window.js')
const { DEV_CSP } = await import('../../main/csp.js')

type Desktop = NonNullable<Awaited<ReturnType<typeof startDesktop>>>

let userData: string
let savedEnv: NodeJS.ProcessEnv
const started: Desktop[] = []
const servers: Server[] = []

beforeEach(() => {
  resetState()
  savedEnv = { ...process.env }
  userData = mkdtempSync(join(tmpdir(), 'gatehouse-startup-'))
  state.userData = userData
  for (const key of Object.keys(process.env)) if (key.startsWith('GATEHOUSE_')) delete process.env[key]
})
afterEach(async () => {
  for (const desktop of started.splice(0)) await desktop.gatehouse.close()
  for (const server of servers.splice(0)) await new Promise((r) => server.close(r))
  process.env = savedEnv
  rmSync(userData, { recursive: true, force: true })
})

const dataDir = () => join(userData, 'data')

/** A free loopback port (bound then released), or one kept busy as another program would. */
const loopbackPort = (keep: boolean) =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port
      if (keep) {
        servers.push(server)
        resolve(port)
      } else server.close(() => resolve(port))
    })
  })

async function start(): Promise<Desktop | null> {
  const desktop = await startDesktop()
  if (desktop) started.push(desktop)
  return desktop
}

/** The app quit after the dialog: exit code 1, nothing left behind. */
function expectQuit(desktop: Desktop | null) {
  expect(desktop).toBeNull()
  expect(state.exitCodes).toEqual([1])
  expect(state.windows).toHaveLength(0)
  expect(state.trays).toHaveLength(0)
  expect(state.handlers.size).toBe(0)
}

/** The app went on: one window, the tray, the API answering. */
async function expectRunning(desktop: Desktop | null): Promise<Desktop> {
  expect(desktop).not.toBeNull()
  expect(state.exitCodes).toEqual([])
  expect(state.windows).toHaveLength(1)
  expect(state.trays).toHaveLength(1)
  expect((await fetch(`${desktop!.gatehouse.ctx.baseURL}/ok`)).status).toBe(200)
  return desktop!
}

/** Starts once normally, so the data folder holds a keychain-sealed secret; then resets the fakes. */
async function sealedSecret(): Promise<string> {
  process.env.GATEHOUSE_PORT = '0'
  const first = await expectRunning(await start())
  const secret = first.gatehouse.ctx.secret
  await first.gatehouse.close()
  started.length = 0
  resetState()
  expect(existsSync(join(dataDir(), 'secret.enc'))).toBe(true)
  return secret
}

describe('desktop start-up: every failure ends in a dialog, then goes on or quits', () => {
  it('a bad option (GATEHOUSE_PORT) names the setting and quits', async () => {
    process.env.GATEHOUSE_PORT = 'eighty'
    state.answer = () => 'Quit'
    expectQuit(await start())
    expect(state.dialogs).toHaveLength(1)
    expect(state.dialogs[0]).toMatchObject({
      type: 'error',
      message: 'Gatehouse cannot start: a start-up setting is wrong.',
      buttons: ['Quit', 'Open the data folder'],
    })
    expect(state.dialogs[0]!.detail).toContain('port: "eighty" is not a port number (0-65535)')
    expect(state.dialogs[0]!.detail).toContain('GATEHOUSE_*')
  })

  it('an unwritable data directory: open the folder, fix it, try again, and the app goes on', async () => {
    const blocker = join(userData, 'not-a-folder')
    writeFileSync(blocker, 'a file where the data folder should be')
    process.env.GATEHOUSE_DATA_DIR = join(blocker, 'data')
    process.env.GATEHOUSE_PORT = '0'
    const answers = ['Open the data folder', 'Try again']
    state.answer = (box) => {
      expect(box.message).toBe('Gatehouse cannot create or write its data folder.')
      const next = answers.shift()!
      if (next === 'Try again') {
        // The user fixes it (moves the file away) before trying again.
        rmSync(blocker)
      }
      return next
    }
    const desktop = await expectRunning(await start())
    expect(state.dialogs).toHaveLength(2)
    expect(state.dialogs[0]!.buttons).toEqual(['Try again', 'Open the data folder', 'Quit'])
    expect(state.dialogs[0]!.detail).toContain('ENOTDIR')
    // The nearest existing folder is opened (the data folder itself cannot be).
    expect(state.openedPaths).toEqual([userData])
    expect(statSync(join(blocker, 'data')).mode & 0o777).toBe(0o700)
    expect(sqliteOf(desktop.gatehouse.database).name).toBe(join(blocker, 'data', 'gatehouse.db'))
  })

  it('an unwritable data directory, and the user quits', async () => {
    writeFileSync(join(userData, 'blocker'), '')
    process.env.GATEHOUSE_DATA_DIR = join(userData, 'blocker', 'data')
    state.answer = () => 'Quit'
    expectQuit(await start())
    expect(state.dialogs).toHaveLength(1)
  })

  it('the data directory is created owner-only (0700), and tightened if it was not', async () => {
    process.env.GATEHOUSE_PORT = '0'
    mkdirSync(dataDir(), { mode: 0o755 })
    expect(statSync(dataDir()).mode & 0o777).toBe(0o755)
    await expectRunning(await start())
    expect(statSync(dataDir()).mode & 0o777).toBe(0o700)
  })

  it('keychain refused: the dialog says to allow access; trying again goes on with the same secret', async () => {
    const secret = await sealedSecret()
    process.env.GATEHOUSE_PORT = '0'
    state.decryptFailure = 'User denied access to the keychain item'
    state.answer = (box) => {
      expect(box.buttons).toEqual(['Try again', 'Reset the secret…', 'Quit'])
      state.decryptFailure = null // the user allows it this time
      return 'Try again'
    }
    const desktop = await expectRunning(await start())
    expect(state.dialogs).toHaveLength(1)
    expect(state.dialogs[0]).toMatchObject({ message: 'The system keychain refused Gatehouse access to its auth secret.' })
    expect(state.dialogs[0]!.detail).toContain('Allow')
    expect(desktop.gatehouse.ctx.secret).toBe(secret)
  })

  it('keychain not available with a sealed secret: quitting leaves no process', async () => {
    await sealedSecret()
    state.encryptionAvailable = false
    state.answer = () => 'Quit'
    expectQuit(await start())
    expect(state.dialogs[0]).toMatchObject({ message: 'The system keychain is not available, so Gatehouse cannot read its auth secret.' })
  })

  it('decrypt error: reset the secret after a warning about sealed secrets; the old one is kept aside', async () => {
    const secret = await sealedSecret()
    process.env.GATEHOUSE_PORT = '0'
    state.decryptFailure = 'Error while decrypting the ciphertext provided to safeStorage.decryptString.'
    state.answer = (box) => {
      if (box.buttons.includes('Reset the secret…')) return 'Reset the secret…'
      state.decryptFailure = null
      return 'Reset the secret'
    }
    const desktop = await expectRunning(await start())
    expect(state.dialogs.map((d) => d.message)).toEqual([
      'Gatehouse cannot decrypt its auth secret with the system keychain.',
      'Resetting the secret cannot be undone from inside Gatehouse.',
    ])
    const warning = state.dialogs[1]!
    expect(warning.buttons).toEqual(['Reset the secret', 'Cancel'])
    expect(warning.detail).toContain('every user is signed out')
    expect(warning.detail).toContain('sealed secrets can no longer be read')
    expect(warning.detail).toContain('SMTP password')
    expect(desktop.gatehouse.ctx.secret).not.toBe(secret)
    const aside = readdirSync(dataDir()).filter((f) => /^secret\.enc\..+\.bak$/.test(f))
    expect(aside).toHaveLength(1)
    expect(existsSync(join(dataDir(), 'secret.enc'))).toBe(true)
  })

  it('decrypt error: cancelling the reset asks again; quitting leaves the sealed secret untouched', async () => {
    await sealedSecret()
    const before = readFileSync(join(dataDir(), 'secret.enc'))
    state.decryptFailure = 'Error while decrypting the ciphertext provided to safeStorage.decryptString.'
    const answers = ['Reset the secret…', 'Cancel', 'Quit']
    state.answer = () => answers.shift()
    expectQuit(await start())
    expect(state.dialogs).toHaveLength(3)
    expect(readFileSync(join(dataDir(), 'secret.enc'))).toEqual(before)
  })

  it('keychain refused on first start: the secret can be kept in a private file instead', async () => {
    process.env.GATEHOUSE_PORT = '0'
    state.encryptFailure = 'User canceled the operation'
    state.answer = (box) => (box.buttons.includes('Keep it in a private file') ? 'Keep it in a private file' : 'OK')
    const desktop = await expectRunning(await start())
    expect(state.dialogs.map((d) => d.message)).toEqual([
      'The system keychain refused Gatehouse access to its auth secret.',
      'No system keychain protects the auth secret on this computer.',
    ])
    expect(readFileSync(join(dataDir(), 'secret'), 'utf8').trim()).toBe(desktop.gatehouse.ctx.secret)
    expect(statSync(join(dataDir(), 'secret')).mode & 0o777).toBe(0o600)
  })

  it('port taken: the next free port is offered, used, and remembered in the Network settings', async () => {
    const taken = await loopbackPort(true)
    mkdirSync(dataDir(), { recursive: true })
    writeFileSync(join(dataDir(), 'network.json'), JSON.stringify({ listen: 'loopback', interface: null, port: taken, baseURL: null }))
    let offered = 0
    state.answer = (box) => {
      const use = box.buttons.find((b) => b.startsWith('Use port '))!
      offered = Number(use.slice('Use port '.length))
      return use
    }
    const desktop = await expectRunning(await start())
    expect(state.dialogs).toHaveLength(1)
    expect(state.dialogs[0]!.message).toBe(`Port ${taken} on 127.0.0.1 is already in use.`)
    expect(state.dialogs[0]!.buttons).toEqual([`Use port ${offered}`, 'Try again', 'Quit'])
    expect(offered).toBeGreaterThan(taken)
    expect(desktop.gatehouse.listening()).toEqual({ host: '127.0.0.1', port: offered })
    expect(desktop.gatehouse.ctx.baseURL).toBe(`http://127.0.0.1:${offered}/api/auth`)
    expect(JSON.parse(readFileSync(join(dataDir(), 'network.json'), 'utf8')).port).toBe(offered)
  })

  it('port taken when GATEHOUSE_PORT fixes it: the dialog says where to change it, nothing is saved; Quit quits', async () => {
    const taken = await loopbackPort(true)
    process.env.GATEHOUSE_PORT = String(taken)
    state.answer = () => 'Quit'
    expectQuit(await start())
    expect(state.dialogs[0]!.detail).toContain('The port is set by GATEHOUSE_PORT')
    expect(existsSync(join(dataDir(), 'network.json'))).toBe(false)
  })

  it('a saved LAN interface that is gone: this computer only for now, the saved setting kept', async () => {
    mkdirSync(dataDir(), { recursive: true })
    const port = await loopbackPort(false)
    const saved = { listen: 'lan', interface: 'eth-gone', port, baseURL: null }
    writeFileSync(join(dataDir(), 'network.json'), JSON.stringify(saved))
    state.answer = () => 'Listen on this computer only'
    const desktop = await expectRunning(await start())
    expect(state.dialogs).toHaveLength(1)
    expect(state.dialogs[0]!.message).toBe('The network interface Gatehouse should listen on has no address now.')
    expect(state.dialogs[0]!.detail).toContain('interface "eth-gone" has no IPv4 address now')
    expect(desktop.gatehouse.listening()).toEqual({ host: '127.0.0.1', port })
    expect(JSON.parse(readFileSync(join(dataDir(), 'network.json'), 'utf8'))).toEqual(saved)
  })

  it('any other failure (a damaged database) offers to try again, open the data folder, or quit', async () => {
    mkdirSync(dataDir(), { recursive: true })
    writeFileSync(join(dataDir(), 'gatehouse.db'), 'this is not a SQLite database, just text long enough to be read as a header...')
    process.env.GATEHOUSE_PORT = '0'
    const answers = ['Open the data folder', 'Quit']
    state.answer = () => answers.shift()
    expectQuit(await start())
    expect(state.dialogs.map((d) => d.message)).toEqual(['Gatehouse could not start.', 'Gatehouse could not start.'])
    expect(state.dialogs[0]!.detail).toMatch(/not a database/i)
    expect(state.openedPaths).toEqual([dataDir()])
  })
})

describe('desktop: secrets on Linux without a keyring (basic_text)', () => {
  it('says plainly the secret is not encrypted, keeps it 0600, and does not claim protection', async () => {
    process.env.GATEHOUSE_PORT = '0'
    state.storageBackend = 'basic_text'
    state.answer = () => 'OK'
    const desktop = await expectRunning(await start())
    expect(state.dialogs).toHaveLength(1)
    expect(state.dialogs[0]).toMatchObject({ type: 'warning', message: 'No system keychain protects the auth secret on this computer.' })
    expect(state.dialogs[0]!.detail).toContain('NOT encrypted')
    expect(state.dialogs[0]!.detail).toContain('basic_text')
    expect(state.dialogs[0]!.detail).toContain(join(dataDir(), 'secret'))
    expect(existsSync(join(dataDir(), 'secret.enc'))).toBe(false)
    expect(statSync(join(dataDir(), 'secret')).mode & 0o777).toBe(0o600)
    await desktop.gatehouse.close()
    started.length = 0

    // Said once: the next start says nothing more.
    resetState()
    state.storageBackend = 'basic_text'
    const again = await expectRunning(await start())
    expect(state.dialogs).toHaveLength(0)
    expect(again.gatehouse.ctx.secret).toBe(desktop.gatehouse.ctx.secret)
  })

  it('a secret sealed earlier with the fixed basic_text key is moved to the 0600 file, not called encrypted', async () => {
    const secret = await sealedSecret()
    process.env.GATEHOUSE_PORT = '0'
    state.storageBackend = 'basic_text'
    state.answer = () => 'OK'
    const desktop = await expectRunning(await start())
    expect(desktop.gatehouse.ctx.secret).toBe(secret)
    expect(existsSync(join(dataDir(), 'secret.enc'))).toBe(false)
    expect(readFileSync(join(dataDir(), 'secret'), 'utf8').trim()).toBe(secret)
    expect(state.dialogs[0]!.detail).toContain('NOT encrypted')
  })
})

describe('desktop: window, menus, permissions, CSP', () => {
  it('grants the clipboard write to the app window only; refuses every other permission and requester', async () => {
    process.env.GATEHOUSE_PORT = '0'
    await expectRunning(await start())
    const win = state.windows[0] as FakeBrowserWindow
    const request = vi.mocked(fakeElectron.session.defaultSession.setPermissionRequestHandler).mock.lastCall![0] as unknown as (
      wc: unknown,
      permission: string,
      callback: (granted: boolean) => void,
      details: { requestingUrl?: string },
    ) => void
    const check = vi.mocked(fakeElectron.session.defaultSession.setPermissionCheckHandler).mock.lastCall![0] as unknown as (
      wc: unknown,
      permission: string,
      origin: string,
      details: { requestingUrl?: string },
    ) => boolean
    const asked = (wc: unknown, permission: string, url: string) => {
      let granted: boolean | undefined
      request(wc, permission, (g) => (granted = g), { requestingUrl: url })
      return granted
    }
    const own = win.webContents.mainFrame.url
    expect(asked(win.webContents, 'clipboard-sanitized-write', own)).toBe(true)
    expect(check(win.webContents, 'clipboard-sanitized-write', 'file://', { requestingUrl: own })).toBe(true)
    expect(asked(win.webContents, 'clipboard-read', own)).toBe(false)
    expect(asked(win.webContents, 'media', own)).toBe(false)
    expect(asked(win.webContents, 'notifications', own)).toBe(false)
    expect(asked(win.webContents, 'clipboard-sanitized-write', 'https://evil.example/')).toBe(false)
    const other = { getURL: () => own } as unknown as WebContents
    expect(asked(other, 'clipboard-sanitized-write', own)).toBe(false)
    expect(check(null, 'clipboard-sanitized-write', 'file://', { requestingUrl: own })).toBe(false)
  })

  it('no DevTools in a packaged app: not in the menus, not in the window', () => {
    const roles = (menu: MenuItemConstructorOptions[]): string[] =>
      menu.flatMap((item) => [String(item.role ?? ''), ...(Array.isArray(item.submenu) ? roles(item.submenu) : [])])
    const production = roles(applicationMenu([], false))
    expect(production).not.toContain('toggleDevTools')
    expect(production).not.toContain('viewMenu')
    expect(production).not.toContain('reload')
    expect(production).toContain('togglefullscreen')
    expect(roles(applicationMenu([], true))).toContain('toggleDevTools')
    expect(windowOptions('/p.cjs').webPreferences?.devTools).toBe(false)
    expect(windowOptions('/p.cjs', undefined, true).webPreferences?.devTools).toBe(true)
  })

  it('the production CSP allows no inline script; the dev one only adds what React refresh and HMR need', async () => {
    process.env.GATEHOUSE_PORT = '0'
    await expectRunning(await start())
    const onHeaders = vi.mocked(fakeElectron.session.defaultSession.webRequest.onHeadersReceived).mock.lastCall![0] as unknown as (
      details: { responseHeaders: Record<string, string[]> },
      callback: (r: { responseHeaders: Record<string, string[]> }) => void,
    ) => void
    let headers: Record<string, string[]> = {}
    onHeaders({ responseHeaders: {} }, (r) => (headers = r.responseHeaders))
    expect(headers['Content-Security-Policy']).toEqual([PANEL_CSP])
    expect(PANEL_CSP).toContain("script-src 'self';")
    expect(DEV_CSP).toContain("script-src 'self' 'unsafe-inline';")
    expect(DEV_CSP).toContain("connect-src 'self' ws://localhost:* ws://127.0.0.1:*;")
    expect(DEV_CSP.replace(" 'unsafe-inline'", '').replace(' ws://localhost:* ws://127.0.0.1:*', '')).toBe(PANEL_CSP)

    // electron-vite dev serves index.html with the dev policy in its meta tag; builds keep the strict one.
    const { devCspPlugin } = await import('../../electron.vite.config.js')
    const plugin = devCspPlugin()
    expect(plugin.apply).toBe('serve')
    const html = readFileSync(join(import.meta.dirname, '../../renderer/index.html'), 'utf8')
    const served = (plugin.transformIndexHtml as (h: string) => string)(html)
    expect(served).toContain(`content="${DEV_CSP}"`)
    expect(html).toContain("script-src 'self';")
    expect(served).not.toContain("script-src 'self';")
  })
})

describe('desktop: the Network section over IPC', () => {
  const call = async (win: FakeBrowserWindow, op: string, input: unknown) =>
    (await state.handlers.get(channelOf(op as never))!(
      { senderFrame: win.webContents.mainFrame } as unknown as IpcMainInvokeEvent,
      input,
    )) as PanelResult

  it('moves the listener to another loopback port, saves it, and the tray copies the new URL', async () => {
    const first = await loopbackPort(false)
    mkdirSync(dataDir(), { recursive: true })
    writeFileSync(join(dataDir(), 'network.json'), JSON.stringify({ listen: 'loopback', interface: null, port: first, baseURL: null }))
    const desktop = await expectRunning(await start())
    const win = state.windows[0] as FakeBrowserWindow
    const got = await call(win, 'network.get', {})
    expect(got).toMatchObject({
      ok: true,
      data: {
        stored: { listen: 'loopback', port: first },
        current: { host: '127.0.0.1', port: first, listening: true },
        overrides: {},
        canSave: true,
      },
    })

    const second = await loopbackPort(false)
    const applied = await call(win, 'network.apply', { listen: 'loopback', interface: null, port: second, baseURL: null })
    expect(applied).toEqual({
      ok: true,
      data: { applied: true, apiURL: `http://127.0.0.1:${second}/api/auth`, host: '127.0.0.1', port: second },
    })
    expect((await fetch(`http://127.0.0.1:${second}/api/auth/ok`)).status).toBe(200)
    await expect(fetch(`http://127.0.0.1:${first}/api/auth/ok`)).rejects.toThrow()
    expect(JSON.parse(readFileSync(join(dataDir(), 'network.json'), 'utf8'))).toEqual({
      listen: 'loopback',
      interface: null,
      port: second,
      baseURL: null,
    })
    state.trays[0]!.menu.find((i) => i.label === 'Copy API URL')!.click!()
    expect(state.clipboard).toBe(`http://127.0.0.1:${second}/api/auth`)
    expect(desktop.gatehouse.ctx.baseURL).toBe(`http://127.0.0.1:${second}/api/auth`)
  })

  it('a port fixed by GATEHOUSE_PORT is marked as a start-up override and cannot be changed from the panel', async () => {
    process.env.GATEHOUSE_PORT = '0'
    await expectRunning(await start())
    const win = state.windows[0] as FakeBrowserWindow
    const got = await call(win, 'network.get', {})
    expect(got).toMatchObject({ ok: true, data: { overrides: { port: { value: '0', source: 'GATEHOUSE_PORT' } } } })
    const refused = await call(win, 'network.apply', { listen: 'loopback', interface: null, port: 4999, baseURL: null })
    expect(refused).toEqual({
      ok: false,
      error: {
        code: 'STARTUP_OVERRIDE',
        status: 403,
        message: 'The port is set at start-up by GATEHOUSE_PORT; change it there (it wins over the panel)',
      },
    })
  })
})

describe('desktop: main/index.ts', () => {
  it('an error start-up did not foresee still ends in a dialog and exit code 1', async () => {
    vi.resetModules()
    vi.doMock('../../main/app.js', () => ({ startDesktop: () => Promise.reject(new Error('something unforeseen')) }))
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      await import('../../main/index.js')
      await vi.waitFor(() => expect(state.exitCodes).toEqual([1]))
      expect(fakeElectron.dialog.showErrorBox).toHaveBeenCalledWith(
        'Gatehouse could not start',
        expect.stringContaining('something unforeseen'),
      )
    } finally {
      spy.mockRestore()
      vi.doUnmock('../../main/app.js')
    }
  })
})
