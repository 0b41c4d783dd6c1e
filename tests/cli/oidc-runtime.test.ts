import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
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
 */

const WARNING = 'Unsupported runtime'
const lts = process.release.lts
const currentSupported = typeof lts === 'string' && lts.charCodeAt(0) >= 'J'.charCodeAt(0)

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Starts `gatehouse serve` with the provider on, on the given node, loads oidc-provider, returns what it printed. */
async function serveOutput(node: string, env: Record<string, string>): Promise<string> {
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
    return server.output()
  } finally {
    server.child.kill('SIGTERM')
    await server.exited
  }
}

describe('the OpenID provider on the supported runtimes', () => {
  // Inside a nested run the current runtime is the one under test (its own better-sqlite3 comes with the environment).
  it(`on this Node (${process.version}): the warning is printed exactly when it is not a supported LTS`, async () => {
    if (NESTED_RUNTIME) expect(currentSupported, `${NESTED_RUNTIME} runs ${process.version}`).toBe(true)
    const output = await serveOutput(process.execPath, {})
    if (currentSupported) expect(output).not.toContain(WARNING)
    else expect(output).toContain(`oidc-provider WARNING: ${WARNING}`)
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
        const output = await serveOutput(runtime.node, runtime.env)
        expect(output).not.toContain(WARNING)
        expect(output).toContain('listening on')
      },
    )
  }
})
