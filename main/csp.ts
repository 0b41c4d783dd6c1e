import { PANEL_CSP } from '../server/panel/http.js'

/**
 * The renderer's Content-Security-Policy. Packaged and `electron-vite preview`: PANEL_CSP (scripts
 * from the app only). `electron-vite dev` only: Vite's React-refresh preamble is an inline module
 * script and HMR talks over a WebSocket to the dev server, so inline scripts and ws: are allowed.
 * electron.vite.config.ts writes the same dev policy into index.html's meta tag while serving.
 */
export const DEV_CSP = PANEL_CSP.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'").replace(
  "connect-src 'self'",
  "connect-src 'self' ws://localhost:* ws://127.0.0.1:*",
)

export const cspFor = (dev: boolean): string => (dev ? DEV_CSP : PANEL_CSP)
