import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Gatehouse as the LDAP benches run it (bench/ldap-scale.ts, bench/ldap-attack.ts): the built
 * server (`bin/gatehouse.js serve`) in a child process, started once its LDAP listener is up.
 */

const root = join(import.meta.dirname, '..')
export const BENCH_ENV = { ...process.env, GATEHOUSE_SECRET: 'bench-secret-0123456789-abcdefghijklmnop', NODE_ENV: 'production' }

export interface GatehouseProcessOptions {
  dataDir: string
  port: number
  /** Node's own flags before the script (`--cpu-prof`, …). */
  nodeArgs?: string[]
  /** `serve`'s flags after the data directory (`--config`, `--database-url`, …). */
  serveArgs?: string[]
  timeoutMs?: number
}

export function spawnGatehouse(options: GatehouseProcessOptions): { child: ChildProcess; started: Promise<void> } {
  const args = [
    ...(options.nodeArgs ?? []),
    join(root, 'bin', 'gatehouse.js'),
    'serve',
    '--port',
    String(options.port),
    '--panel-port',
    '0',
    '--data-dir',
    options.dataDir,
    ...(options.serveArgs ?? []),
  ]
  const child = spawn(process.execPath, args, { env: BENCH_ENV, stdio: ['ignore', 'pipe', 'pipe'] })
  const started = new Promise<void>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`gatehouse did not start:\n${out}`)), options.timeoutMs ?? 180_000)
    const on = (chunk: Buffer) => {
      out += chunk.toString()
      if (/LDAP listening on/.test(out)) {
        clearTimeout(timer)
        child.stdout?.removeAllListeners('data').resume()
        child.stderr?.removeAllListeners('data').resume()
        resolve()
      }
    }
    child.stdout?.on('data', on)
    child.stderr?.on('data', on)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`gatehouse exited (${code}):\n${out}`))
    })
  })
  return { child, started }
}

/** Stops a child (SIGTERM) and resolves once it has exited. */
export const stopChild = (child: ChildProcess): Promise<void> =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })

const TICK = 100 // USER_HZ

/** CPU seconds (user + system) of a process, from /proc/<pid>/stat (the benches' machine is shared: wall time misleads). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICK
}
