import { resolve } from 'node:path'
import { defineConfig } from 'electron-vite'
import { rendererConfig } from './vite.renderer.config'

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
    build: { ...rendererConfig.build },
  },
})
