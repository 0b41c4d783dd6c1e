import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import {
  app,
  BrowserWindow,
  clipboard,
  dialog,
  ipcMain,
  Menu,
  type MenuItemConstructorOptions,
  nativeImage,
  safeStorage,
  session,
  shell,
  Tray,
} from 'electron'
import { listenFailure, readServeOptions, type ServeOptions } from '../server/cli.js'
import { ConfigError } from '../server/config/store.js'
import { readNetworkSettings, registerNetworkRuntime, resolveNetwork } from '../server/features/network/index.js'
import { writeNetworkSettings } from '../server/features/network/settings.js'
import { nextFreePort } from '../server/features/network/system.js'
import { consoleLogger, createGatehouse, type Gatehouse } from '../server/gatehouse.js'
import { createPanelService } from '../server/panel/service.js'
import { cspFor } from './csp.js'
import { desktopOperator, registerPanelIpc, trustedSenderCheck } from './ipc.js'
import { loadOrCreateSecret, SecretError, setSecretAside } from './secrets.js'
import {
  ask,
  badOptionPrompt,
  dataDirPrompt,
  ensureDataDir,
  existingAncestor,
  failurePrompt,
  interfaceGonePrompt,
  OPEN_FOLDER,
  portPrompt,
  QUIT,
  RESET_CONFIRM,
  RESET_SECRET,
  resetSecretPrompt,
  secretPrompt,
  USE_PORT,
  unprotectedSecretPrompt,
  WITHOUT_KEYCHAIN,
} from './startup.js'
import { hardenContents, permissionHandlers, sameAppURL, windowOptions } from './window.js'

/** Paths of the built app: out/main/index.js, out/preload/index.cjs, out/renderer/index.html. */
function paths() {
  const here = import.meta.dirname
  const resources = app.isPackaged ? process.resourcesPath : join(app.getAppPath(), 'resources')
  return {
    preload: join(here, '../preload/index.cjs'),
    renderer: join(here, '../renderer/index.html'),
    icon: join(resources, 'icon.png'),
    migrations: app.isPackaged ? join(process.resourcesPath, 'migrations') : join(app.getAppPath(), 'server/db/migrations'),
  }
}

export interface DesktopApp {
  gatehouse: Gatehouse
  window(): BrowserWindow | null
}

/** Ends the app after a start-up failure the user chose not to fix (releases the single-instance lock). */
function quitAfterFailure(): null {
  app.exit(1)
  return null
}

const openFolder = (dir: string) => void shell.openPath(existingAncestor(dir))

/**
 * Everything that can fail before the window opens, each failure answered by a dialog:
 * the options, the data folder, the auth secret, the database and the port. Resolves with a
 * listening Gatehouse, or null when the user chose to quit.
 */
async function startServer(p: ReturnType<typeof paths>): Promise<{ gatehouse: Gatehouse; options: ServeOptions } | null> {
  // Settings from the environment work as for `gatehouse serve`; the data lives under userData.
  let options: ServeOptions
  const dataDir = process.env.GATEHOUSE_DATA_DIR || join(app.getPath('userData'), 'data')
  try {
    options = readServeOptions([], { ...process.env, GATEHOUSE_DATA_DIR: dataDir })
  } catch (e) {
    if ((await ask(dialog, badOptionPrompt((e as Error).message))) === OPEN_FOLDER) openFolder(dataDir)
    return quitAfterFailure()
  }

  for (;;) {
    try {
      ensureDataDir(options.dataDir)
      break
    } catch (e) {
      const choice = await ask(dialog, dataDirPrompt(options.dataDir, e as NodeJS.ErrnoException))
      if (choice === QUIT) return quitAfterFailure()
      if (choice === OPEN_FOLDER) openFolder(options.dataDir)
    }
  }

  let secret = options.secret
  let withoutKeychain = false
  while (secret === undefined) {
    try {
      const result = await loadOrCreateSecret(options.dataDir, safeStorage, { withoutKeychain })
      secret = result.secret
      consoleLogger.info(`Auth secret: ${result.protection}`)
      // Said once, when the secret is first kept without a keychain: no claim of protection.
      if (result.storage === 'file' && result.changed) await ask(dialog, unprotectedSecretPrompt(result.protection))
    } catch (e) {
      if (!(e instanceof SecretError)) throw e
      const choice = await ask(dialog, secretPrompt(e.kind, e.message, e.sealed))
      if (choice === QUIT) return quitAfterFailure()
      if (choice === WITHOUT_KEYCHAIN) withoutKeychain = true
      if (choice === RESET_SECRET && (await ask(dialog, resetSecretPrompt(options.dataDir))) === RESET_CONFIRM) {
        const aside = setSecretAside(options.dataDir)
        consoleLogger.warn(`auth secret reset by the user; the old one is kept as ${aside}`)
      }
    }
  }

  for (;;) {
    let gatehouse: Gatehouse | null = null
    try {
      let network: ReturnType<typeof resolveNetwork>
      try {
        const settings = readNetworkSettings(options.dataDir)
        try {
          network = resolveNetwork(settings, options.network)
        } catch (e) {
          // The chosen interface is gone (another network, a cable out): this computer only, this time.
          if (!(e instanceof ConfigError) || settings.listen !== 'lan') throw e
          if ((await ask(dialog, interfaceGonePrompt(e.message))) === QUIT) return quitAfterFailure()
          network = resolveNetwork({ ...settings, listen: 'loopback', interface: null }, options.network)
        }
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e
        if ((await ask(dialog, badOptionPrompt(e.message))) === OPEN_FOLDER) openFolder(options.dataDir)
        return quitAfterFailure()
      }
      gatehouse = createGatehouse({
        dataDir: options.dataDir,
        port: network.port,
        host: network.host,
        baseURL: network.baseURL,
        secret,
        smtpUrl: options.smtpUrl,
        config: options.overrides,
        configSources: options.configSources,
        migrations: p.migrations,
      })
      for (;;) {
        try {
          await gatehouse.listen({ port: network.port })
          break
        } catch (e) {
          if (!listenFailure(e, network.host, network.port, { port: 'GATEHOUSE_PORT', host: 'GATEHOUSE_HOST' })) throw e
          const suggested = (e as NodeJS.ErrnoException).code === 'EADDRINUSE' ? await nextFreePort(network.host, network.port) : null
          const fixedBy = options.network.port?.source
          const choice = await ask(dialog, portPrompt(network.host, network.port, suggested, fixedBy))
          if (choice === QUIT) {
            await gatehouse.close()
            return quitAfterFailure()
          }
          if (suggested && choice === USE_PORT(suggested)) {
            network = { ...network, port: suggested }
            // Remembered in the Network settings unless a variable fixes the port.
            if (!fixedBy) writeNetworkSettings(options.dataDir, { ...readNetworkSettings(options.dataDir), port: suggested })
          }
        }
      }
      registerNetworkRuntime(gatehouse, { dataDir: options.dataDir, overrides: options.network })
      return { gatehouse, options }
    } catch (e) {
      await gatehouse?.close().catch(() => {})
      const choice = await ask(dialog, failurePrompt(e as Error))
      if (choice === QUIT) return quitAfterFailure()
      if (choice === OPEN_FOLDER) openFolder(options.dataDir)
    }
  }
}

/**
 * The desktop control panel: one instance, the Gatehouse server in-process on the data directory
 * under userData, one hardened window, a tray menu. Quitting closes the server cleanly. Every
 * start-up failure ends in a dialog (startServer), then the app goes on or quits.
 */
export async function startDesktop(): Promise<DesktopApp | null> {
  if (!app.requestSingleInstanceLock()) {
    app.quit()
    return null
  }
  await app.whenReady()
  const p = paths()

  const started = await startServer(p)
  if (!started) return null
  const { gatehouse } = started
  const apiURL = () => gatehouse.ctx.baseURL

  const devURL = !app.isPackaged ? process.env.ELECTRON_RENDERER_URL : undefined
  const appURL = devURL ?? pathToFileURL(p.renderer).href
  const isAppURL = sameAppURL(appURL)

  let win: BrowserWindow | null = null
  // Every web contents (including any a bug might create) stays on the app's pages.
  app.on('web-contents-created', (_event, contents) => hardenContents(contents, isAppURL))
  // The clipboard (copy buttons) for the app's own window; every other permission refused.
  const permissions = permissionHandlers((contents) => contents !== null && contents === win?.webContents, isAppURL)
  session.defaultSession.setPermissionRequestHandler(permissions.request)
  session.defaultSession.setPermissionCheckHandler(permissions.check)
  const csp = cspFor(devURL !== undefined)
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [csp] } })
  })

  const service = createPanelService({
    gatehouse,
    apiURL,
    mode: 'desktop',
    version: app.getVersion(),
    startedAt: Date.now(),
    logger: consoleLogger,
    // The desktop panel acts as the OS account running the app (main/ipc.ts, desktopOperator).
    operator: desktopOperator(),
  })
  registerPanelIpc(
    ipcMain,
    service,
    trustedSenderCheck(() => win?.webContents.mainFrame, isAppURL),
  )

  let quitting = false
  const show = () => {
    if (!win || win.isDestroyed()) {
      win = new BrowserWindow(windowOptions(p.preload, p.icon, !app.isPackaged))
      win.once('ready-to-show', () => win?.show())
      win.on('close', (event) => {
        // With a tray the server keeps running when the window closes; Quit stops it.
        if (!quitting && tray) {
          event.preventDefault()
          win?.hide()
        }
      })
      void (devURL ? win.loadURL(devURL) : win.loadFile(p.renderer))
      return
    }
    if (win.isMinimized()) win.restore()
    win.show()
    win.focus()
  }

  const template: MenuItemConstructorOptions[] = [
    { label: 'Show Gatehouse', click: show },
    // The URL as it is now (the Network section can move the listener).
    { label: 'Copy API URL', click: () => clipboard.writeText(apiURL()) },
    { type: 'separator' },
    { label: 'Quit Gatehouse', accelerator: 'CmdOrCtrl+Q', click: () => app.quit() },
  ]
  let tray: Tray | null = null
  try {
    tray = new Tray(nativeImage.createFromPath(p.icon).resize({ width: 18, height: 18 }))
    tray.setToolTip(`Gatehouse — ${apiURL()}`)
    tray.setContextMenu(Menu.buildFromTemplate(template))
    tray.on('click', show)
  } catch {
    tray = null
  }
  Menu.setApplicationMenu(Menu.buildFromTemplate(applicationMenu(template, !app.isPackaged)))

  app.on('second-instance', show)
  app.on('activate', show)
  app.on('window-all-closed', () => {
    if (!tray) app.quit()
  })
  let closed = false
  app.on('before-quit', (event) => {
    quitting = true
    if (closed) return
    event.preventDefault()
    void gatehouse.close().finally(() => {
      closed = true
      app.quit()
    })
  })

  show()
  return { gatehouse, window: () => win }
}

/** The menu bar: no DevTools and no reload in a packaged app. */
export function applicationMenu(template: MenuItemConstructorOptions[], development: boolean): MenuItemConstructorOptions[] {
  const view: MenuItemConstructorOptions[] = [
    { role: 'resetZoom' },
    { role: 'zoomIn' },
    { role: 'zoomOut' },
    { type: 'separator' },
    { role: 'togglefullscreen' },
    ...(development ? [{ type: 'separator' } as const, { role: 'reload' } as const, { role: 'toggleDevTools' } as const] : []),
  ]
  return [{ label: 'Gatehouse', submenu: template }, { role: 'editMenu' }, { label: 'View', submenu: view }, { role: 'windowMenu' }]
}
