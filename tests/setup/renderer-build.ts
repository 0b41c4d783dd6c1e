/**
 * Global setup of the `panel` test project (vitest.config.ts): the renderer built once per run,
 * exactly as users get it — `electron-vite build`, the build step of `npm run build`, into
 * out/renderer, the folder `gatehouse serve` serves the browser panel from and the desktop app
 * loads — so the panel tests drive the production build, not a build of their own.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    /** out/renderer, freshly built by this run. */
    rendererDir: string
  }
}

const root = join(import.meta.dirname, '..', '..')

export default function setup(project: TestProject): void {
  const started = Date.now()
  execFileSync(process.execPath, [join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build', '--logLevel', 'warn'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 300_000,
  })
  const rendererDir = join(root, 'out', 'renderer')
  if (!existsSync(join(rendererDir, 'index.html'))) throw new Error(`electron-vite build left no ${rendererDir}/index.html`)
  console.log(`panel tests: the production renderer (electron-vite build → out/renderer) built in ${Date.now() - started} ms`)
  project.provide('rendererDir', rendererDir)
}
