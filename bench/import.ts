/**
 * Import benchmark (not a test; issue 29): `gatehouse import users` of BENCH_IMPORT_USERS users
 * (default 100 000) with bcrypt hashes, through the built bundle (bin/gatehouse.js), into a fresh
 * SQLite data directory and into a throwaway PostgreSQL (tests/helpers/engines.ts). Hashes are
 * stored as they come at import (never verified), so the file holds well-formed `$2b$10$` hashes,
 * a few real ones (bcryptjs) repeated with distinct salts. Reports wall time, the CPU time of the
 * import process (user + system, from its rusage), its peak RSS, and the machine's load average
 * (this machine is shared: wall time under load is not the import's own cost). Targets: < 30 s on
 * SQLite, < 60 s on PostgreSQL.
 *
 *   node bin/run-ts.js bench/import.ts
 *   BENCH_IMPORT_USERS=20000 BENCH_IMPORT_FORMAT=csv node bin/run-ts.js bench/import.ts
 */
import { spawn } from 'node:child_process'
import { createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startPostgres } from '../tests/helpers/engines.js'

const USERS = Number(process.env.BENCH_IMPORT_USERS ?? 100_000)
const FORMAT = process.env.BENCH_IMPORT_FORMAT === 'csv' ? 'csv' : 'json'
const BIN = join(import.meta.dirname, '..', 'bin', 'gatehouse.js')
const ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

function fakeBcrypt(i: number): string {
  // 22 salt characters + 31 hash characters, varied per user (deterministic, cheap).
  let s = ''
  let x = (i + 1) * 2654435761
  for (let k = 0; k < 53; k++) {
    x = (x * 1103515245 + 12345) % 2147483648
    s += ALPHABET[x % 64]
  }
  return `$2b$10$${s}`
}

async function writeFile(path: string): Promise<void> {
  const out = createWriteStream(path)
  const write = async (text: string) => {
    if (!out.write(text)) await new Promise<void>((r) => out.once('drain', () => r()))
  }
  if (FORMAT === 'csv') await write('email,name,emailVerified,createdAt,passwordHash\n')
  else await write('[\n')
  for (let i = 0; i < USERS; i++) {
    const row = {
      email: `user${i}@bench.example.com`,
      name: `Bench User ${i}`,
      emailVerified: i % 3 === 0,
      createdAt: new Date(1_600_000_000_000 + i * 60_000).toISOString(),
      passwordHash: fakeBcrypt(i),
    }
    if (FORMAT === 'csv') await write(`${row.email},${row.name},${row.emailVerified},${row.createdAt},${row.passwordHash}\n`)
    else await write(`${JSON.stringify(row)}${i < USERS - 1 ? ',' : ''}\n`)
  }
  if (FORMAT === 'json') await write(']\n')
  await new Promise<void>((r) => out.end(() => r()))
}

interface Run {
  code: number | null
  wallS: number
  cpuS: number
  maxRssMb: number
  stdout: string
}

function runImport(file: string, args: string[], dir: string): Promise<Run> {
  const reporter = join(dir, 'usage.cjs')
  writeFileSync(
    reporter,
    "process.on('exit', () => { const u = process.resourceUsage(); process.stderr.write('usage ' + (u.userCPUTime + u.systemCPUTime) + ' ' + u.maxRSS + '\\n') })\n",
  )
  const started = performance.now()
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'import', 'users', '--file', file, '--json', ...args], {
      env: { ...process.env, NODE_OPTIONS: `--require ${reporter}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString()
    })
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString()
    })
    child.on('exit', (code) => {
      const m = /usage (\d+) (\d+)/.exec(stderr)
      resolve({
        code,
        wallS: (performance.now() - started) / 1000,
        cpuS: Number(m?.[1] ?? 0) / 1e6,
        maxRssMb: Number(m?.[2] ?? 0) / 1024,
        stdout: stdout || stderr,
      })
    })
  })
}

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-import-'))
try {
  const file = join(dir, `users.${FORMAT}`)
  await writeFile(file)
  console.log(`${USERS} users, ${FORMAT}, ${(statSync(file).size / 1e6).toFixed(1)} MB; load average ${loadavg()[0]?.toFixed(1)}`)
  const rows: string[] = []
  const sqlite = await runImport(file, ['--data-dir', join(dir, 'sqlite')], dir)
  rows.push(`| SQLite | ${sqlite.wallS.toFixed(1)} | ${sqlite.cpuS.toFixed(1)} | ${sqlite.maxRssMb.toFixed(0)} | ${sqlite.code} |`)
  if (sqlite.code !== 0) console.log(sqlite.stdout)
  const postgres = await startPostgres()
  try {
    const url = await postgres.createDatabase()
    const run = await runImport(file, ['--data-dir', join(dir, 'pg'), '--database-url', url], dir)
    rows.push(`| PostgreSQL | ${run.wallS.toFixed(1)} | ${run.cpuS.toFixed(1)} | ${run.maxRssMb.toFixed(0)} | ${run.code} |`)
    if (run.code !== 0) console.log(run.stdout)
  } finally {
    await postgres.stop()
  }
  console.log('\n| target | wall s | import CPU s | peak RSS MB | exit |\n|---|---|---|---|---|')
  for (const row of rows) console.log(row)
  console.log(`\nload average after: ${loadavg()[0]?.toFixed(1)}`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
