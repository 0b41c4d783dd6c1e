import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig, type UserConfig } from 'vite'

const root = dirname(fileURLToPath(import.meta.url))

/**
 * The hosted end-user pages (renderer/hosted → out/hosted), served by the server at
 * `{basePath}/ui/<page>` with `{basePath}/ui/assets/*`: relative asset paths (so any base path
 * works), no inline script (the modulepreload polyfill would be one), one entry.
 */
export const hostedConfig: UserConfig = {
  root: resolve(root, 'renderer/hosted'),
  base: './',
  plugins: [react()],
  build: {
    outDir: resolve(root, 'out/hosted'),
    emptyOutDir: true,
    minify: true,
    target: 'es2022',
    sourcemap: false,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 900,
    rolldownOptions: { input: resolve(root, 'renderer/hosted/index.html') },
  },
}

export default defineConfig(hostedConfig)
