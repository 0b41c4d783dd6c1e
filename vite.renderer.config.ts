import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig, type UserConfig } from 'vite'

const root = dirname(fileURLToPath(import.meta.url))

/**
 * The renderer build, shared by electron-vite (desktop) and the browser panel (`gatehouse serve`
 * serves out/renderer): minified, relative asset paths (file:// in Electron), one chunk per view.
 */
export const rendererConfig: UserConfig = {
  root: resolve(root, 'renderer'),
  base: './',
  plugins: [react()],
  build: {
    outDir: resolve(root, 'out/renderer'),
    emptyOutDir: true,
    minify: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 900,
    rolldownOptions: {
      input: resolve(root, 'renderer/index.html'),
    },
  },
}

export default defineConfig(rendererConfig)
