import type { PermissionCheckHandlerHandlerDetails, PermissionRequest } from 'electron'
import { type BrowserWindowConstructorOptions, shell, type WebContents } from 'electron'

/** The renderer's window: isolated, sandboxed, no Node, no webviews, no insecure content. */
export function windowOptions(preloadPath: string, iconPath?: string, devTools = false): BrowserWindowConstructorOptions {
  return {
    width: 1320,
    height: 860,
    minWidth: 960,
    minHeight: 620,
    show: false,
    title: 'Gatehouse',
    backgroundColor: '#f8f9fa',
    ...(iconPath ? { icon: iconPath } : {}),
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      safeDialogs: true,
      // DevTools only in development (`electron-vite dev`, unpackaged runs).
      devTools,
    },
  }
}

/** http(s) URLs only: other schemes (file:, javascript:, custom handlers) never reach the OS. */
export function isExternalWebURL(value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password
  } catch {
    return false
  }
}

export function openExternalSafely(value: string): boolean {
  if (!isExternalWebURL(value)) return false
  void shell.openExternal(value)
  return true
}

/**
 * Keeps a web contents on the app's own pages: navigation elsewhere and new windows are refused,
 * and http(s) links open in the user's browser instead.
 */
export function hardenContents(contents: WebContents, isAppURL: (url: string) => boolean): void {
  contents.on('will-navigate', (event, url) => {
    if (isAppURL(url)) return
    event.preventDefault()
    openExternalSafely(url)
  })
  contents.on('will-redirect', (event, url) => {
    if (!isAppURL(url)) event.preventDefault()
  })
  contents.on('will-attach-webview', (event) => event.preventDefault())
  contents.setWindowOpenHandler(({ url }) => {
    openExternalSafely(url)
    return { action: 'deny' }
  })
}

/** Same document: the app's renderer URL, ignoring the hash (views are hash routes). */
export function sameAppURL(appURL: string): (url: string) => boolean {
  const strip = (u: string) => u.split('#')[0]
  const base = new URL(appURL)
  return (url) => {
    try {
      const candidate = new URL(url)
      if (base.protocol === 'file:') return strip(candidate.href) === strip(base.href)
      return candidate.origin === base.origin
    } catch {
      return false
    }
  }
}

/** Permissions the app's own window may use: writing the clipboard (the copy buttons). */
const GRANTED = new Set(['clipboard-sanitized-write'])

/**
 * The session's permission handlers: the clipboard write for the app's own page in its own window
 * (so every "Copied" the panel shows is true), nothing else, for nobody else.
 */
export function permissionHandlers(isOwnContents: (contents: WebContents | null) => boolean, isAppURL: (url: string) => boolean) {
  const allowed = (contents: WebContents | null, permission: string, url: string | undefined) =>
    GRANTED.has(permission) && isOwnContents(contents) && typeof url === 'string' && isAppURL(url)
  return {
    request: (
      contents: WebContents,
      permission: string,
      callback: (granted: boolean) => void,
      details: PermissionRequest | { requestingUrl?: string },
    ) => callback(allowed(contents, permission, (details as { requestingUrl?: string }).requestingUrl ?? contents.getURL())),
    check: (contents: WebContents | null, permission: string, requestingOrigin: string, details: PermissionCheckHandlerHandlerDetails) =>
      allowed(contents, permission, details.requestingUrl ?? requestingOrigin),
  }
}
