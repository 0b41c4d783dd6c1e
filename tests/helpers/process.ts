import { type ChildProcess, spawn } from 'node:child_process'
import { basename, join } from 'node:path'

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
  return runNode([GATEHOUSE_BIN, ...args], env, timeoutMs, input).then(({ code, stdout, stderr }) => ({ code, stdout, stderr }))
}

/**
 * Runs `node <args>` to completion (bounded: killed and rejected past `timeoutMs`, with what it
 * printed) and returns its exit code, its output apart and both interleaved as they came.
 */
export function runNode(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 20_000,
  input?: string,
): Promise<{ code: number | null; stdout: string; stderr: string; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    })
    if (input !== undefined) child.stdin?.end(input)
    let stdout = ''
    let stderr = ''
    let output = ''
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString()
      output += c.toString()
    })
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString()
      output += c.toString()
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${args.map((a) => basename(a)).join(' ')} did not finish within ${timeoutMs} ms:\n${output}`))
    }, timeoutMs)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, output })
    })
  })
}
