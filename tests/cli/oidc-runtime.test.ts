import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { warnSkipped } from '../helpers/engines.js'
import { startServerProcess } from '../helpers/process.js'

/**
 * oidc-provider 9 supports only Node.js LTS releases from 22 ("Jod") on; on anything else it
 * prints "oidc-provider WARNING: Unsupported runtime" when it is first loaded. README's
 * requirements name the supported runtime; on it, `gatehouse serve` with the provider on prints
 * no such line. On an older Node (20.19+, which runs everything else) the check cannot hold and
 * the suite says so loudly.
 */

const lts = process.release.lts
const supported = typeof lts === 'string' && lts.charCodeAt(0) >= 'J'.charCodeAt(0)
const reason = supported
  ? undefined
  : `Node ${process.version} is not an LTS release from 22 on (oidc-provider 9 warns "Unsupported runtime" there; README: Node.js 22 LTS or later)`
warnSkipped('tests/cli/oidc-runtime.test.ts', reason)

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe.skipIf(!supported)('the OpenID provider on the supported runtime', () => {
  it('gatehouse serve with oidcProvider.enabled prints no "Unsupported runtime" line', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-oidc-runtime-'))
    dirs.push(dataDir)
    const config = join(dataDir, 'extra.json')
    writeFileSync(config, JSON.stringify({ oidcProvider: { enabled: true } }))
    const server = await startServerProcess(['--port', '0', '--panel-port', '0', '--data-dir', dataDir, '--config', config])
    try {
      // oidc-provider is loaded on the first OIDC request.
      const discovery = await fetch(`${server.url}/.well-known/openid-configuration`)
      expect(discovery.status).toBe(200)
      expect(server.output()).not.toContain('Unsupported runtime')
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  })
})
