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
  Tray,
} from 'electron'
import { readServeOptions } from '../server/cli.js'
import { consoleLogger, createGatehouse, type Gatehouse } from '../server/gatehouse.js'
import { PANEL_CSP } from '../server/panel/http.js'
import { createPanelService } from '../server/panel/service.js'
import { registerPanelIpc, trustedSenderCheck } from './ipc.js'
import { loadOrCreateSecret } from './secrets.js'
import { hardenContents, sameAppURL, windowOptions } from './window.js'

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

/**
 * The desktop control panel: one instance, the Gatehouse server in-process on the data directory
 * under userData, one hardened window, a tray menu. Quitting closes the server cleanly.
 */
export async function startDesktop(): Promise<DesktopApp | null> {
  if (!app.requestSingleInstanceLock()) {
    app.quit()
    return null
  }
  await app.whenReady()
  const p = paths()

  // Settings from the environment work as for `gatehouse serve`; the data lives under userData.
  const options = readServeOptions([], { ...process.env, GATEHOUSE_DATA_DIR: process.env.GATEHOUSE_DATA_DIR || join(app.getPath('userData'), 'data') })
  const { mkdirSync } = await import('node:fs')
  mkdirSync(options.dataDir, { recursive: true })
  const secret = options.secret ?? (await loadOrCreateSecret(options.dataDir, safeStorage)).secret

  let gatehouse: Gatehouse
  let apiURL: string
  try {
    gatehouse = createGatehouse({
      dataDir: options.dataDir,
      port: options.port,
      host: options.host,
      baseURL: options.baseURL,
      secret,
      smtpUrl: options.smtpUrl,
      config: options.overrides,
      migrations: p.migrations,
    })
    apiURL = await gatehouse.listen()
  } catch (e) {
    dialog.showErrorBox('Gatehouse could not start', (e as Error).message)
    app.exit(1)
    return null
  }

  const devURL = !app.isPackaged ? process.env.ELECTRON_RENDERER_URL : undefined
  const appURL = devURL ?? pathToFileURL(p.renderer).href
  const isAppURL = sameAppURL(appURL)

  // Every web contents (including any a bug might create) stays on the app's pages.
  app.on('web-contents-created', (_event, contents) => hardenContents(contents, isAppURL))
  session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false))
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [PANEL_CSP] } })
  })

  let win: BrowserWindow | null = null
  const service = createPanelService({
    gatehouse,
    apiURL: () => gatehouse.ctx.baseURL,
    mode: 'desktop',
    version: app.getVersion(),
    startedAt: Date.now(),
    logger: consoleLogger,
  })
  registerPanelIpc(ipcMain, service, trustedSenderCheck(() => win?.webContents.mainFrame, isAppURL))

  let quitting = false
  const show = () => {
    if (!win || win.isDestroyed()) {
      win = new BrowserWindow(windowOptions(p.preload, p.icon))
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
    { label: 'Copy API URL', click: () => clipboard.writeText(apiURL) },
    { type: 'separator' },
    { label: 'Quit Gatehouse', accelerator: 'CmdOrCtrl+Q', click: () => app.quit() },
  ]
  let tray: Tray | null = null
  try {
    tray = new Tray(nativeImage.createFromPath(p.icon).resize({ width: 18, height: 18 }))
    tray.setToolTip(`Gatehouse — ${apiURL}`)
    tray.setContextMenu(Menu.buildFromTemplate(template))
    tray.on('click', show)
  } catch {
    tray = null
  }
  Menu.setApplicationMenu(
    Menu.buildFromTemplate([
      { label: 'Gatehouse', submenu: template },
      { role: 'editMenu' },
      { role: 'viewMenu' },
      { role: 'windowMenu' },
    ]),
  )

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
