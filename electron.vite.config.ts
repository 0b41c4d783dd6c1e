import { resolve } from 'node:path'
import { defineConfig } from 'electron-vite'
import type { Plugin } from 'vite'
import { DEV_CSP } from './main/csp'
import { rendererConfig } from './vite.renderer.config'

/**
 * `electron-vite dev` only: index.html's CSP meta tag gets the dev policy (main/csp.ts), which lets
 * Vite's inline React-refresh preamble and its HMR WebSocket run. Builds keep the strict policy.
 */
export const devCspPlugin = (): Plugin => ({
  name: 'gatehouse:dev-csp',
  apply: 'serve',
  transformIndexHtml: (html) =>
    html.replace(
      /(<meta\s+http-equiv="Content-Security-Policy"\s+content=")[^"]*(")/,
      (_m, open: string, close: string) => `${open}${DEV_CSP}${close}`,
    ),
})

/**
 * `npm run build`: out/main/index.js (ESM, the server bundled in), out/preload/index.cjs
 * (CommonJS, self-contained: sandboxed preloads cannot load ESM or node_modules) and
 * out/renderer (see vite.renderer.config.ts).
 */
export default defineConfig({
  main: {
    // Electron 45 embeds Node 24 (N-API 10): it loads better-sqlite3 13's bundled N-API prebuild,
    // so the desktop app needs no native rebuild. Both settings are needed (toolchain.md §2).
    resolve: { alias: { 'better-sqlite3': 'better-sqlite3-napi' } },
    build: {
      externalizeDeps: { exclude: ['better-sqlite3'] },
      minify: false,
      rolldownOptions: { input: { index: resolve(import.meta.dirname, 'main/index.ts') } },
    },
  },
  preload: {
    build: {
      externalizeDeps: false,
      minify: true,
      rolldownOptions: {
        input: { index: resolve(import.meta.dirname, 'preload/index.ts') },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    ...rendererConfig,
    plugins: [...(rendererConfig.plugins ?? []), devCspPlugin()],
    build: { ...rendererConfig.build },
  },
})
