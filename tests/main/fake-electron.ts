import { EventEmitter } from 'node:events'
import { vi } from 'vitest'

/**
 * A stand-in for the `electron` module (its binary cannot run here): records what main/ and
 * preload/ ask of Electron so tests can drive the registered handlers and inspect the window.
 */
export type Listener = (...args: unknown[]) => unknown

export class FakeFrame {
  constructor(
    public url: string,
    public parent: FakeFrame | null = null,
  ) {}
}

export class FakeWebContents extends EventEmitter {
  mainFrame: FakeFrame
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null
  constructor(url = 'about:blank') {
    super()
    this.mainFrame = new FakeFrame(url)
  }
  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }) {
    this.windowOpenHandler = handler
  }
  getURL() {
    return this.mainFrame.url
  }
}

export const state = {
  handlers: new Map<string, Listener>(),
  exposed: new Map<string, unknown>(),
  windows: [] as FakeBrowserWindow[],
  trays: [] as FakeTray[],
  appEvents: new Map<string, Listener[]>(),
  clipboard: '',
  quitCalls: 0,
  singleInstance: true,
  userData: '',
  appPath: process.cwd(),
  encryptionAvailable: true,
  /** What safeStorage.getSelectedStorageBackend() answers (Linux): a real keyring by default. */
  storageBackend: 'gnome_libsecret',
  /** Makes safeStorage fail as a keychain would (null: it works). */
  decryptFailure: null as string | null,
  encryptFailure: null as string | null,
  /** Every message box shown, in order, and the function that picks the button (by label). */
  dialogs: [] as Array<{ type?: string; title?: string; message: string; detail?: string; buttons: string[] }>,
  answer: (_box: { message: string; buttons: string[] }): string | undefined => undefined,
  openedPaths: [] as string[],
  exitCodes: [] as number[],
}

/** Resets what one start-up test may have changed. */
export function resetState(): void {
  state.handlers.clear()
  state.windows.length = 0
  state.trays.length = 0
  state.appEvents.clear()
  state.dialogs.length = 0
  state.openedPaths.length = 0
  state.exitCodes.length = 0
  state.answer = () => undefined
  state.encryptionAvailable = true
  state.storageBackend = 'gnome_libsecret'
  state.decryptFailure = null
  state.encryptFailure = null
}

export class FakeBrowserWindow extends EventEmitter {
  webContents = new FakeWebContents()
  loaded: string | null = null
  visible = false
  destroyed = false
  constructor(public options: Record<string, unknown>) {
    super()
    state.windows.push(this)
  }
  loadFile(file: string) {
    this.loaded = file
    this.webContents.mainFrame.url = `file://${file}`
    queueMicrotask(() => this.emit('ready-to-show'))
    return Promise.resolve()
  }
  loadURL(url: string) {
    this.loaded = url
    this.webContents.mainFrame.url = url
    return Promise.resolve()
  }
  show() {
    this.visible = true
  }
  hide() {
    this.visible = false
  }
  focus() {}
  restore() {}
  isMinimized() {
    return false
  }
  isDestroyed() {
    return this.destroyed
  }
}

export class FakeTray {
  menu: Array<{ label?: string; click?: () => void }> = []
  tooltip = ''
  constructor(public image: unknown) {
    state.trays.push(this)
  }
  setToolTip(text: string) {
    this.tooltip = text
  }
  setContextMenu(menu: Array<{ label?: string; click?: () => void }>) {
    this.menu = menu
  }
  on() {}
}

const emitApp = (event: string, ...args: unknown[]) => {
  for (const listener of state.appEvents.get(event) ?? []) listener(...args)
}

export const fakeElectron = {
  app: {
    isPackaged: false,
    requestSingleInstanceLock: () => state.singleInstance,
    whenReady: () => Promise.resolve(),
    getPath: (name: string) => (name === 'userData' ? state.userData : '/tmp'),
    getAppPath: () => state.appPath,
    getVersion: () => '9.9.9-test',
    on(event: string, listener: Listener) {
      state.appEvents.set(event, [...(state.appEvents.get(event) ?? []), listener])
    },
    quit() {
      state.quitCalls++
      // Electron emits before-quit; a handler may call preventDefault() and quit again later.
      let prevented = false
      emitApp('before-quit', { preventDefault: () => (prevented = true) })
      return prevented
    },
    exit: vi.fn((code: number) => {
      state.exitCodes.push(code)
    }),
    emit: emitApp,
  },
  BrowserWindow: FakeBrowserWindow,
  Tray: FakeTray,
  Menu: {
    buildFromTemplate: (template: unknown[]) => template,
    setApplicationMenu: vi.fn(),
  },
  nativeImage: { createFromPath: () => ({ resize: () => ({}) }) },
  clipboard: {
    writeText: (text: string) => {
      state.clipboard = text
    },
  },
  dialog: {
    showErrorBox: vi.fn(),
    showMessageBox: vi.fn(
      async (options: { type?: string; title?: string; message: string; detail?: string; buttons: string[]; cancelId?: number }) => {
        state.dialogs.push(options)
        const label = state.answer(options)
        const index = label === undefined ? -1 : options.buttons.indexOf(label)
        if (label !== undefined && index < 0) throw new Error(`no button "${label}" in ${JSON.stringify(options.buttons)}`)
        return { response: index < 0 ? (options.cancelId ?? options.buttons.length - 1) : index, checkboxChecked: false }
      },
    ),
  },
  shell: {
    openExternal: vi.fn(() => Promise.resolve()),
    openPath: vi.fn(async (path: string) => {
      state.openedPaths.push(path)
      return ''
    }),
  },
  session: {
    defaultSession: {
      setPermissionRequestHandler: vi.fn(),
      setPermissionCheckHandler: vi.fn(),
      webRequest: { onHeadersReceived: vi.fn() },
    },
  },
  safeStorage: {
    isAsyncEncryptionAvailable: () => Promise.resolve(state.encryptionAvailable),
    encryptStringAsync: (plain: string) =>
      state.encryptFailure
        ? Promise.reject(new Error(state.encryptFailure))
        : Promise.resolve(Buffer.from(`enc:${Buffer.from(plain).toString('base64')}`)),
    decryptStringAsync: (data: Buffer) =>
      state.decryptFailure
        ? Promise.reject(new Error(state.decryptFailure))
        : Promise.resolve({ result: Buffer.from(data.toString().slice(4), 'base64').toString(), shouldReEncrypt: false }),
    getSelectedStorageBackend: () => state.storageBackend,
  },
  ipcMain: {
    handle(channel: string, listener: Listener) {
      if (state.handlers.has(channel)) throw new Error(`second handler for ${channel}`)
      state.handlers.set(channel, listener)
    },
    removeHandler(channel: string) {
      state.handlers.delete(channel)
    },
  },
  ipcRenderer: { invoke: vi.fn((channel: string, input: unknown) => Promise.resolve({ ok: true, data: { channel, input } })) },
  contextBridge: {
    exposeInMainWorld(key: string, value: unknown) {
      state.exposed.set(key, value)
    },
  },
}
