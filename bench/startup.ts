/**
 * Start-up benchmark (not a test): `gatehouse serve` as `npm start` runs it (the prebuilt
 * dist/server/main.mjs), each time on a fresh data directory. Measures, over STARTUP_RUNS starts:
 *   - cold start: from spawning the process to the first 200 of GET /api/auth/ok;
 *   - idle RSS of the whole process tree (the server and every descendant) two seconds after
 *     that first answer, read from /proc;
 *   - the number of processes in the tree (1: no compiler or helper left running).
 * Prints medians and the goal (< 400 ms, < 80 MB).
 *
 *   npm run bench:startup            # 10 starts
 *   STARTUP_RUNS=20 npm run bench:startup
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
// @ts-expect-error: a plain JavaScript module without types
import { buildServer, isFresh } from '../bin/build-server.js'

const RUNS = Number(process.env.STARTUP_RUNS ?? 10)
const IDLE_MS = Number(process.env.STARTUP_IDLE_MS ?? 2000)
const root = join(import.meta.dirname, '..')
// STARTUP_BIN: another entry point to compare (e.g. an older bin/gatehouse.js).
const bin = process.env.STARTUP_BIN ?? join(root, 'bin', 'gatehouse.js')

/** pid and every descendant (Linux /proc). */
function processTree(pid: number): number[] {
  const out = [pid]
  for (let i = 0; i < out.length; i++) {
    const current = out[i] as number
    try {
      for (const task of readdirSync(`/proc/${current}/task`)) {
        const children = readFileSync(`/proc/${current}/task/${task}/children`, 'utf8').trim()
        if (children) out.push(...children.split(/\s+/).map(Number))
      }
    } catch {}
  }
  return out
}

function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) * 1024 : 0
  } catch {
    return 0
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

async function firstOk(child: ChildProcess, started: number): Promise<number> {
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`no start within 30 s:\n${out}`)), 30_000)
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(out)
      if (match?.[1]) {
        clearTimeout(timer)
        resolve(match[1])
      }
    })
    child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${out}`)))
  })
  for (;;) {
    const res = await fetch(`${url}/ok`).catch(() => null)
    if (res?.status === 200) {
      await res.arrayBuffer()
      return performance.now() - started
    }
  }
}

/** CPU seconds (user + system) a process has used so far: robust on a machine loaded by other work. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) / 100
}

async function once(): Promise<{ ms: number; cpu: number; rss: number; processes: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-startup-'))
  const started = performance.now()
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--data-dir', dataDir], {
    cwd: root,
    env: { ...process.env, GATEHOUSE_SECRET: 'startup-bench-secret-0123456789abcdef', GATEHOUSE_PANEL_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    const ms = await firstOk(child, started)
    const cpu = cpuSeconds(child.pid as number) * 1000
    await new Promise((r) => setTimeout(r, IDLE_MS))
    const tree = processTree(child.pid as number)
    return { ms, cpu, rss: tree.reduce((sum, pid) => sum + rssBytes(pid), 0), processes: tree.length }
  } finally {
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGTERM')
    await exited
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (!isFresh()) await buildServer()
const runs: Array<{ ms: number; cpu: number; rss: number; processes: number }> = []
for (let i = 0; i < RUNS; i++) runs.push(await once())
const ms = median(runs.map((r) => r.ms))
const mb = median(runs.map((r) => r.rss)) / 1024 / 1024
const processes = Math.max(...runs.map((r) => r.processes))
console.log(`\n## Start-up (${RUNS} starts, fresh data directory each, median)\n`)
console.log('| measure | median | min | max | goal |')
console.log('|---|---|---|---|---|')
console.log(
  `| cold start to first 200 (GET /api/auth/ok) | ${ms.toFixed(0)} ms | ${Math.min(...runs.map((r) => r.ms)).toFixed(0)} ms | ${Math.max(...runs.map((r) => r.ms)).toFixed(0)} ms | < 400 ms |`,
)
console.log(
  `| CPU time (user + system) to first 200 | ${median(runs.map((r) => r.cpu)).toFixed(0)} ms | ${Math.min(...runs.map((r) => r.cpu)).toFixed(0)} ms | ${Math.max(...runs.map((r) => r.cpu)).toFixed(0)} ms | |`,
)
console.log(
  `| idle RSS, whole process tree | ${mb.toFixed(1)} MB | ${(Math.min(...runs.map((r) => r.rss)) / 1048576).toFixed(1)} MB | ${(Math.max(...runs.map((r) => r.rss)) / 1048576).toFixed(1)} MB | < 80 MB |`,
)
console.log(`| processes in the tree | ${processes} | | | 1 (no compiler, no helper) |`)
