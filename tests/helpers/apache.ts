import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

/**
 * A real relying party or service provider: Apache httpd (Debian's, with its modules), started in
 * the foreground on loopback with its whole configuration in a temporary directory, and the recipes
 * of the docs it is set up by, run as written.
 */

const ROOT = resolve(import.meta.dirname, '../..')
export const APACHE_MODULES = '/usr/lib/apache2/modules'
/** The PATH Apache and its tools are found on (Debian installs them in /usr/sbin); `bin`: a folder put first. */
export const apachePath = (bin?: string): string => [bin, process.env.PATH, '/usr/sbin'].filter(Boolean).join(':')

/**
 * Why Apache cannot run here with these modules (`{ 'mod_auth_openidc.so': 'why, how to install' }`),
 * or undefined.
 */
export function apacheMissing(modules: Record<string, string>): string | undefined {
  if (spawnSync('apache2', ['-v'], { stdio: 'ignore', env: { ...process.env, PATH: apachePath() } }).status !== 0)
    return 'apache2 is not installed (Debian: apache2)'
  for (const [file, why] of Object.entries(modules)) if (!existsSync(join(APACHE_MODULES, file))) return why
  return undefined
}

/** A block of docs/<file> marked `<!-- recipe: NAME -->` (inside a list item: its indent removed). */
export function docRecipe(file: string, name: string): string {
  const doc = readFileSync(join(ROOT, 'docs', file), 'utf8')
  const m = new RegExp(`<!-- recipe: ${name} -->\\n( *)\`\`\`\\w+\\n([\\s\\S]*?)\\n\\1\`\`\``).exec(doc)
  if (!m?.[2]) throw new Error(`docs/${file} has no recipe ${name}`)
  const indent = m[1] ?? ''
  return `${m[2]
    .split('\n')
    .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
    .join('\n')}\n`
}

/** Runs a recipe with sh (asynchronously: the recipe may call or write to this process's server). */
export function runRecipe(script: string, options: { cwd?: string; env: Record<string, string>; timeoutMs?: number }): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('sh', ['-eu', '-c', script], { cwd: options.cwd ?? ROOT, env: { ...process.env, ...options.env } })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
    })
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString()
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      if (code === 0) resolvePromise(out)
      else reject(new Error(`recipe failed (${code}):\n${out}\n${err}`))
    })
  })
}

/** A CGI script at `<dir>/cgi/env.cgi` that answers text/plain with what `body` (sh) prints. */
export function writeEnvCgi(dir: string, body: string): void {
  mkdirSync(join(dir, 'cgi'), { recursive: true })
  writeFileSync(join(dir, 'cgi', 'env.cgi'), `#!/bin/sh\nprintf 'Content-Type: text/plain\\n\\n'\n${body}`)
  chmodSync(join(dir, 'cgi', 'env.cgi'), 0o755)
}

/** As root (a CI container) Apache serves as nobody, who is given `path`; otherwise it serves as this process's user. */
export function giveToApache(path: string): void {
  if (process.getuid?.() === 0) spawnSync('chown', ['-R', 'nobody:nogroup', path])
}

/** What env.cgi printed (`NAME=value` a line), as an object. */
export const envOf = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  )

export interface ApacheConfig {
  /** Modules beyond the core set (prefork, authn/authz core, authz_user, alias, cgi): `[name, file]`. */
  modules: [string, string][]
  /** The rest of httpd.conf: Listen, virtual hosts, Include, … */
  lines: string[]
  /** Prefork's bounds (2 spare and 4 workers unless said). */
  maxSpareServers?: number
  maxRequestWorkers?: number
}

/** Writes `<dir>/httpd.conf` (ServerRoot the directory, its pid file and error log in `<dir>/logs`) and gives the directory to Apache's user. */
export function writeApacheConfig(dir: string, config: ApacheConfig): void {
  const asRoot = process.getuid?.() === 0
  const load = ([mod, file]: [string, string]) => `LoadModule ${mod} ${APACHE_MODULES}/${file}`
  mkdirSync(join(dir, 'logs'), { recursive: true })
  const core: [string, string][] = [
    ['mpm_prefork_module', 'mod_mpm_prefork.so'],
    ['authn_core_module', 'mod_authn_core.so'],
    ['authz_core_module', 'mod_authz_core.so'],
    ['authz_user_module', 'mod_authz_user.so'],
    ['alias_module', 'mod_alias.so'],
    ['cgi_module', 'mod_cgi.so'],
  ]
  writeFileSync(
    join(dir, 'httpd.conf'),
    [
      `ServerRoot "${dir}"`,
      'ServerName 127.0.0.1',
      ...(asRoot ? ['User nobody', 'Group nogroup'] : [`User #${process.getuid?.() ?? 0}`, `Group #${process.getgid?.() ?? 0}`]),
      `PidFile "${dir}/logs/httpd.pid"`,
      `DefaultRuntimeDir "${dir}/logs"`,
      `ErrorLog "${dir}/logs/error.log"`,
      'LogLevel warn',
      ...[...core, ...config.modules].map(load),
      'StartServers 1',
      'MinSpareServers 1',
      `MaxSpareServers ${config.maxSpareServers ?? 2}`,
      `MaxRequestWorkers ${config.maxRequestWorkers ?? 4}`,
      ...config.lines,
      '',
    ].join('\n'),
  )
  giveToApache(dir)
}

export interface Apache {
  process: ChildProcess
  /** Its error log (`<dir>/logs/error.log`), '' before it exists. */
  errorLog(): string
  /** Re-reads its configuration: SIGHUP, then waits until the error log says it resumed once more. */
  reload(): Promise<void>
  /** SIGTERM, and its whole process group killed if it has not exited in 20 s. */
  stop(): Promise<void>
}

/**
 * Starts Apache on `<dir>/httpd.conf` in the foreground and waits (30 s at most) until each of
 * `urls` answers (`up`: with 200 unless said); throws with its stderr and error log if it exits first.
 */
export async function startApache(dir: string, urls: string[], up: (status: number) => boolean = (s) => s === 200): Promise<Apache> {
  let stderr = ''
  // A process group of its own: Apache's prefork signals its whole group when it stops.
  const child = spawn('apache2', ['-DFOREGROUND', '-f', join(dir, 'httpd.conf')], {
    cwd: dir,
    env: { ...process.env, PATH: apachePath() },
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString()
  })
  const log = join(dir, 'logs', 'error.log')
  const errorLog = () => (existsSync(log) ? readFileSync(log, 'utf8') : '')
  const apache: Apache = {
    process: child,
    errorLog,
    async reload() {
      const resumed = () => (errorLog().match(/resuming normal operations/g) ?? []).length
      const before = resumed()
      child.kill('SIGHUP')
      const deadline = Date.now() + 30_000
      while (resumed() <= before) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`apache did not come back:\n${stderr}\n${errorLog()}`)
        await new Promise((r) => setTimeout(r, 100))
      }
    },
    async stop() {
      if (child.exitCode !== null) return
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))])
      if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGKILL')
    },
  }
  const deadline = Date.now() + 30_000
  for (;;) {
    const answered = await Promise.all(
      urls.map((url) =>
        fetch(url, { signal: AbortSignal.timeout(2000) }).then(
          (res) => up(res.status),
          () => false,
        ),
      ),
    )
    if (answered.every(Boolean)) return apache
    if (child.exitCode !== null || Date.now() > deadline) {
      await apache.stop()
      throw new Error(`apache did not start:\n${stderr}\n${errorLog()}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
}
