#!/usr/bin/env node
/**
 * Builds the headless server once: server/main.ts → dist/server/main.mjs (one ES module, npm
 * packages left external), plus dist/server/sources.json, the fingerprint (path, size, mtime) of
 * every source it was built from. `npm install` runs this (the `prepare` script), and so does
 * `npm run build`; bin/gatehouse.js then starts the built file without any compiler, and rebuilds
 * first only when a source differs from the fingerprint (so an edited checkout, or a test run,
 * never runs an old bundle).
 *
 *   node bin/build-server.js            build
 *   node bin/build-server.js --if-stale build only when the sources changed
 */
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync, mkdirSync, existsSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// Two levels below the root, like the sources, so paths resolved from import.meta.url still hold.
export const outDir = join(root, 'dist', 'server')
export const outFile = join(outDir, 'main.mjs')
const stampFile = join(outDir, 'sources.json')

/** "path size mtime" of every TypeScript source under server/, sorted; cheap (stat only). */
export function sourceFingerprint() {
  const lines = []
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.ts')) {
        const stat = statSync(path)
        lines.push(`${relative(root, path)} ${stat.size} ${stat.mtimeMs}`)
      }
    }
  }
  walk(join(root, 'server'))
  return lines.sort().join('\n')
}

/** True when dist/server/main.mjs exists and was built from exactly the sources on disk. */
export function isFresh() {
  if (!existsSync(join(root, 'server', 'main.ts'))) return existsSync(outFile) // an install without sources
  try {
    return existsSync(outFile) && readFileSync(stampFile, 'utf8') === sourceFingerprint()
  } catch {
    return false
  }
}

export async function buildServer() {
  const before = sourceFingerprint()
  const esbuild = await import('esbuild')
  try {
    const result = await esbuild.build({
      entryPoints: [join(root, 'server', 'main.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      write: false,
      logLevel: 'silent',
    })
    mkdirSync(outDir, { recursive: true })
    // Written aside and renamed: processes starting at the same time never read half a file.
    const tmp = `${outFile}.${process.pid}.tmp`
    writeFileSync(tmp, result.outputFiles[0].contents)
    renameSync(tmp, outFile)
    const stampTmp = `${stampFile}.${process.pid}.tmp`
    writeFileSync(stampTmp, before)
    renameSync(stampTmp, stampFile)
  } finally {
    // esbuild's service process must not outlive the build (gatehouse serve leaves no helper).
    await esbuild.stop()
  }
  return outFile
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--if-stale') && isFresh()) process.exit(0)
  const started = Date.now()
  await buildServer()
  console.log(`gatehouse: built ${relative(root, outFile)} in ${Date.now() - started} ms`)
}
