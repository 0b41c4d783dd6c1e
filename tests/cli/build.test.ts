import { readdirSync, readFileSync, statSync, utimesSync } from 'node:fs'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
// @ts-expect-error: a plain JavaScript module without types
import { isFresh, outFile } from '../../bin/build-server.js'
import { runCli, startServerProcess } from '../helpers/process.js'

const root = join(import.meta.dirname, '..', '..')
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Direct children of a process (Linux /proc). */
function children(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  )
}

describe('the prebuilt server', () => {
  it('gatehouse serve runs dist/server/main.mjs and leaves no compiler or helper process', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-build-'))
    dirs.push(dataDir)
    const server = await startServerProcess(['--port', '0', '--data-dir', dataDir])
    try {
      expect((await fetch(`${server.url}/ok`)).status).toBe(200)
      expect(children(server.child.pid as number)).toEqual([])
      // What runs is the built file, built from the sources as they are.
      expect(isFresh()).toBe(true)
      expect(readFileSync(`/proc/${server.child.pid}/cmdline`, 'utf8').split('\0')).toContain(join(root, 'bin', 'gatehouse.js'))
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  })

  it('rebuilds before starting when a source changed since the build, so nothing runs an old bundle', async () => {
    const source = join(root, 'server', 'main.ts')
    const built = statSync(outFile).mtimeMs
    // A later modification time is all it takes (the fingerprint is path, size and mtime).
    const later = new Date(Math.max(Date.now(), statSync(source).mtimeMs) + 1000)
    utimesSync(source, later, later)
    expect(isFresh()).toBe(false)
    const help = await runCli(['--help'], {}, 60_000)
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('gatehouse backup')
    expect(isFresh()).toBe(true)
    expect(statSync(outFile).mtimeMs).toBeGreaterThan(built)
  })
})
