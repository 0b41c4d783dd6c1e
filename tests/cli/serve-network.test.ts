import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runCli, startServerProcess } from '../helpers/process.js'

const dirs: string[] = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-net-'))
  dirs.push(dir)
  return dir
}
const servers: Server[] = []
/** Occupies a free loopback port, as another program would. */
const occupy = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    servers.push(server)
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port))
  })
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((r) => server.close(r))
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('gatehouse serve: the listener', () => {
  it('a taken port stops start-up with one line naming the flag to change, exit code 1', async () => {
    const port = await occupy()
    const result = await runCli(['serve', '--port', String(port), '--data-dir', tempDir()])
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      `gatehouse: port ${port} on 127.0.0.1 is already in use (another Gatehouse or another program); choose another port with --port <n> (or GATEHOUSE_PORT)\n`,
    )
  })

  it('listens where the Network panel stored it (data/network.json); flags and variables win', async () => {
    const dataDir = tempDir()
    const port = await occupy()
    await new Promise((r) => servers.pop()!.close(r))
    writeFileSync(join(dataDir, 'network.json'), JSON.stringify({ listen: 'loopback', interface: null, port, baseURL: null }))
    const stored = await startServerProcess(['--data-dir', dataDir, '--panel-port', '0'])
    expect(stored.url).toBe(`http://127.0.0.1:${port}/api/auth`)
    stored.child.kill('SIGTERM')
    await stored.exited

    const flagged = await startServerProcess(['--data-dir', dataDir, '--port', '0'])
    expect(flagged.url).not.toBe(`http://127.0.0.1:${port}/api/auth`)
    expect(flagged.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/auth$/)
    flagged.child.kill('SIGTERM')
    await flagged.exited
  })

  it('a malformed network.json stops start-up with one line naming the field', async () => {
    const dataDir = tempDir()
    writeFileSync(join(dataDir, 'network.json'), JSON.stringify({ listen: 'everywhere' }))
    const result = await runCli(['serve', '--port', '0', '--data-dir', dataDir])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^gatehouse: network settings .*network\.json: listen: /)
  })
})
