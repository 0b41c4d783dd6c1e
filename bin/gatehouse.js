#!/usr/bin/env node
/**
 * `gatehouse` entry point. Runs the server built by `npm install` / `npm run build`
 * (dist/server/main.mjs, plain JavaScript): no compiler starts and no helper process stays.
 *
 * In a source checkout the build is checked against the sources first (a stat of each file, a few
 * milliseconds): if any source changed since the build, it is rebuilt once with esbuild, whose
 * service is stopped before the server starts. So an edited checkout, or a test run, never runs an
 * old bundle. If esbuild is missing, the sources run through tsx.
 */
import module from 'node:module'
import { pathToFileURL } from 'node:url'
import v8 from 'node:v8'
import { buildServer, isFresh, outFile } from './build-server.js'

// Node 22.1+: keep V8's compiled code of the bundle between starts (compiling it is most of the
// start-up CPU time). Absent on Node 20: nothing happens.
module.enableCompileCache?.()

// Start-up allocates in one burst (every module of the bundle evaluated once, most of it kept), and
// V8 answers a burst by doubling the young generation up to its maximum (2 × 8 MB), which an idle
// server then holds for good: about 9 MB of the idle RSS (issue 39, `npm run bench:startup`). Until
// the server is up the young generation keeps its initial size; then it grows again as requests
// need (V8's default factor, 2), so a loaded server sizes it by its traffic, not by its start.
v8.setFlagsFromString('--semi-space-growth-factor=1')

let entry = outFile
if (!isFresh()) {
  try {
    entry = await buildServer()
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error
    const { register } = await import('tsx/esm/api')
    register()
    entry = new URL('../server/main.ts', import.meta.url).pathname
  }
}
await import(pathToFileURL(entry).href)
// Resolved once the command is done or the server listens (server/main.ts awaits `listen()`).
v8.setFlagsFromString('--semi-space-growth-factor=2')
