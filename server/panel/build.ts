import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/**
 * `npm start` runs the TypeScript sources without a build step; the panel's renderer, though, is a
 * bundle. When it is missing, build it once with Vite (a dev dependency of a source checkout).
 * Returns false when it cannot (Vite absent): the panel then explains how to build it.
 */
export async function ensurePanelAssets(assetsDir: string, log: (line: string) => void): Promise<boolean> {
  if (existsSync(join(assetsDir, 'index.html'))) return true
  const config = join(root, 'vite.renderer.config.ts')
  if (!existsSync(config)) return false
  try {
    // A computed specifier: bundlers (the Electron main build) leave Vite out.
    const specifier = 'vite'
    const vite = (await import(/* @vite-ignore */ specifier)) as typeof import('vite')
    log('Building the control panel (first start only)...')
    await vite.build({ configFile: config, logLevel: 'warn', build: { outDir: assetsDir, emptyOutDir: true } })
    return existsSync(join(assetsDir, 'index.html'))
  } catch (e) {
    log(`Could not build the control panel: ${(e as Error).message}. Run npm run build.`)
    return false
  }
}
