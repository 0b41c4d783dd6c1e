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
import { buildServer, isFresh, outFile } from './build-server.js'

// Node 22.1+: keep V8's compiled code of the bundle between starts (compiling it is most of the
// start-up CPU time). Absent on Node 20: nothing happens.
module.enableCompileCache?.()

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
