import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'

export const GATEHOUSE_BIN = join(import.meta.dirname, '..', '..', 'bin', 'gatehouse.js')

export interface RunningServer {
  child: ChildProcess
  /** The API URL it printed. */
  url: string
  output: () => string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/**
 * Starts `gatehouse serve` as a real process and waits (bounded) for its "listening" line; `node`:
 * another Node.js executable to run it on (tests/helpers/runtimes.ts), this one by default.
 */
export function startServerProcess(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 20_000,
  node = process.execPath,
): Promise<RunningServer> {
  const child = spawn(node, [GATEHOUSE_BIN, 'serve', ...args], {
    env: { ...process.env, GATEHOUSE_SECRET: 'process-test-secret-0123456789abcdef', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString()
  })
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  )
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`server did not start within ${timeoutMs} ms:\n${out}`))
    }, timeoutMs)
    const check = () => {
      // The API's line: a metrics (or LDAP) listener may announce itself first.
      const match = /API listening on (http:\/\/[^"\s]+)/.exec(out)
      if (match?.[1]) {
        clearTimeout(timer)
        resolve({ child, url: match[1], output: () => out, exited })
      }
    }
    child.stdout?.on('data', check)
    exited.then(({ code }) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code} before listening:\n${out}`))
    })
  })
}

/** Runs the CLI to completion (bounded) and returns its exit code and output. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 20_000,
  input?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [GATEHOUSE_BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    })
    if (input !== undefined) child.stdin?.end(input)
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString()
    })
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString()
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`cli did not finish within ${timeoutMs} ms: ${stdout}${stderr}`))
    }, timeoutMs)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}
