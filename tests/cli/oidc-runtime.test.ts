import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { warnSkipped } from '../helpers/engines.js'
import { startServerProcess } from '../helpers/process.js'
import { findRuntime, NESTED_RUNTIME, RUNTIME_MAJORS } from '../helpers/runtimes.js'

/**
 * oidc-provider 9 supports only Node.js LTS releases from 22 ("Jod") on; on anything else it
 * prints "oidc-provider WARNING: Unsupported runtime" when it is first loaded. README names the
 * runtimes CI runs the provider on, Node 22 LTS and 24 LTS: on each, `gatehouse serve` with the
 * provider on prints no such line. They are taken from the runtimes `node bin/install-runtimes.js`
 * installs (.ci/run does) — and this file runs on each of them too (tests/runtime/other-runtimes.test.ts),
 * where the runtime under test is its own. On the checkout's Node, whatever it is, the warning is
 * there exactly when that Node is not a supported LTS (so the check is seen to catch it).
 *
 * The same start shows which SQLite driver the server itself chose (server/db/sqlite-driver.ts),
 * read from the addon its process mapped (/proc/PID/maps), with no test hook in its environment:
 * better-sqlite3 13 (`better-sqlite3-napi`) on Node 22 and 24 — 12 aborts Node 24 now and then
 * (WiseLibs/better-sqlite3#1515) — and better-sqlite3 12 where N-API 10 is missing (Node 20).
 */

const WARNING = 'Unsupported runtime'
const lts = process.release.lts
const currentSupported = typeof lts === 'string' && lts.charCodeAt(0) >= 'J'.charCodeAt(0)

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** The tests' redirection of `better-sqlite3` (tests/runtime/better-sqlite3-hook.mjs) left out: the server as users start it. */
const WITHOUT_TEST_HOOK = { NODE_OPTIONS: '', GATEHOUSE_BETTER_SQLITE3: '' }

/** Which better-sqlite3 addon a process has loaded: its path's package folder under node_modules. */
function sqliteAddons(pid: number): string[] {
  const maps = readFileSync(`/proc/${pid}/maps`, 'utf8')
  const found = [...maps.matchAll(/\/node_modules\/(better-sqlite3(?:-napi)?)\/\S*\.node$/gm)].map((m) => m[1] as string)
  return [...new Set(found)]
}

/**
 * Starts `gatehouse serve` with the provider on, on the given node, loads oidc-provider, returns
 * what it printed and the better-sqlite3 packages whose addon it loaded.
 */
async function serveOutput(node: string, env: Record<string, string>): Promise<{ output: string; sqlite: string[] }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-oidc-runtime-'))
  dirs.push(dataDir)
  const config = join(dataDir, 'extra.json')
  writeFileSync(config, JSON.stringify({ oidcProvider: { enabled: true } }))
  const server = await startServerProcess(
    ['--port', '0', '--panel-port', '0', '--data-dir', dataDir, '--config', config],
    env,
    20_000,
    node,
  )
  try {
    // oidc-provider is loaded on the first OIDC request.
    const discovery = await fetch(`${server.url}/.well-known/openid-configuration`)
    expect(discovery.status).toBe(200)
    expect(((await discovery.json()) as { issuer: string }).issuer).toBe(`${server.url}`)
    const pid = server.child.pid
    if (pid === undefined) throw new Error('no server process')
    return { output: server.output(), sqlite: sqliteAddons(pid) }
  } finally {
    server.child.kill('SIGTERM')
    await server.exited
  }
}

describe('the OpenID provider on the supported runtimes', () => {
  // Inside a nested run the current runtime is the one under test (its own better-sqlite3 comes with the environment).
  it(`on this Node (${process.version}): the warning is printed exactly when it is not a supported LTS`, async () => {
    if (NESTED_RUNTIME) expect(currentSupported, `${NESTED_RUNTIME} runs ${process.version}`).toBe(true)
    const { output, sqlite } = await serveOutput(process.execPath, WITHOUT_TEST_HOOK)
    if (currentSupported) expect(output).not.toContain(WARNING)
    else expect(output).toContain(`oidc-provider WARNING: ${WARNING}`)
    expect(sqlite).toEqual([Number(process.versions.napi) >= 10 ? 'better-sqlite3-napi' : 'better-sqlite3'])
  })

  for (const major of NESTED_RUNTIME ? [] : RUNTIME_MAJORS) {
    const runtime = findRuntime(major)
    const missing = typeof runtime === 'string' ? runtime : undefined
    warnSkipped(`tests/cli/oidc-runtime.test.ts on Node ${major} LTS`, missing)
    it.skipIf(missing !== undefined)(
      `on Node ${major} LTS: gatehouse serve with oidcProvider.enabled prints no "${WARNING}" line`,
      async () => {
        if (typeof runtime === 'string') return
        expect(runtime.version).toMatch(new RegExp(`^v${major}\\.`))
        const { output, sqlite } = await serveOutput(runtime.node, { PATH: runtime.env.PATH ?? '', ...WITHOUT_TEST_HOOK })
        expect(output).not.toContain(WARNING)
        expect(output).toContain('listening on')
        // The server's own choice, better-sqlite3 13, with nothing of the tests' redirection in its environment.
        expect(sqlite).toEqual(['better-sqlite3-napi'])
      },
    )
  }
})
