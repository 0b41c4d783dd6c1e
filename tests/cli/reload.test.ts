import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { HttpClient, uniqueEmail } from '../helpers/http.js'
import { type RunningServer, runCli, startServerProcess } from '../helpers/process.js'

/**
 * Issue 50 §10: a hand edit of DATA_DIR/config.json applies without a restart. `gatehouse reload`
 * checks the file and sends SIGHUP to the server named by gatehouse.pid; the server re-reads the
 * file, applies what changes at run time (as a panel save would), logs a start-up-only key as
 * needing a restart (its old value stays in effect), and refuses an invalid file, changing nothing.
 * The real `gatehouse serve` process and the real CLI.
 */

const dirs: string[] = []
const servers: RunningServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    if (server.child.exitCode === null) server.child.kill('SIGTERM')
    await server.exited
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** Waits (bounded) until the server's output holds `line` `times` times. */
async function logged(server: RunningServer, line: string | RegExp, times = 1): Promise<void> {
  const count = () =>
    server
      .output()
      .split('\n')
      .filter((l) => (typeof line === 'string' ? l.includes(line) : line.test(l))).length
  for (let i = 0; i < 200 && count() < times; i++) await new Promise((r) => setTimeout(r, 50))
  expect(count(), server.output()).toBeGreaterThanOrEqual(times)
}

const signUp = (server: RunningServer) =>
  new HttpClient(server.url).post<{ code?: string }>('/sign-up/email', {
    name: 'R',
    email: uniqueEmail('reload'),
    password: 'correct horse battery',
  })

describe('gatehouse reload (SIGHUP)', () => {
  it('applies a hand edit of config.json at once, keeps a start-up-only key until restart, refuses an invalid file', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-reload-'))
    dirs.push(dataDir)
    const file = join(dataDir, 'config.json')
    writeFileSync(file, `${JSON.stringify({ signUp: { mode: 'open' } }, null, 2)}\n`)
    const server = await startServerProcess(['--port', '0', '--panel-port', '0', '--data-dir', dataDir, '--rate-limit', 'off'])
    servers.push(server)
    expect((await signUp(server)).status).toBe(200)

    // A change that applies at run time: sign-up closed, no restart.
    writeFileSync(file, `${JSON.stringify({ signUp: { mode: 'closed' } }, null, 2)}\n`)
    const sent = await runCli(['reload', '--data-dir', dataDir])
    expect(sent.stderr).toBe('')
    expect(sent.code).toBe(0)
    expect(sent.stdout).toContain(`sent SIGHUP to the server (pid ${server.child.pid})`)
    await logged(server, 'config reload: applied signUp.mode')
    const closed = await signUp(server)
    expect(closed.status).toBe(400)
    expect(closed.body.code).toBe('EMAIL_PASSWORD_SIGN_UP_DISABLED')
    // The file is the operator's: not rewritten.
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ signUp: { mode: 'closed' } })

    // A key read at start only: logged as needing a restart; the API still answers where it did.
    writeFileSync(file, `${JSON.stringify({ signUp: { mode: 'closed' }, basePath: '/auth' }, null, 2)}\n`)
    expect((await runCli(['reload', '--data-dir', dataDir])).code).toBe(0)
    await logged(server, 'config reload: basePath changed in config.json but is read at start-up only: restart to apply it')
    expect((await fetch(`${server.url}/ok`)).status).toBe(200)

    // An invalid file: the CLI says why and sends nothing; a bare SIGHUP is refused by the server.
    writeFileSync(file, `${JSON.stringify({ signUp: { mode: 'sometimes' } }, null, 2)}\n`)
    const refused = await runCli(['reload', '--data-dir', dataDir])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/^gatehouse: config file .*config\.json: signUp\.mode/)
    expect(server.output()).not.toContain('config reload refused')
    server.child.kill('SIGHUP')
    await logged(server, /config reload refused, nothing changed: config file .*config\.json: signUp\.mode/)
    expect((await signUp(server)).body.code).toBe('EMAIL_PASSWORD_SIGN_UP_DISABLED')

    // Back to open by hand, reloaded by signal: sign-up works again.
    writeFileSync(file, `${JSON.stringify({ signUp: { mode: 'open' } }, null, 2)}\n`)
    server.child.kill('SIGHUP')
    await logged(server, 'config reload: applied signUp.mode', 2)
    expect((await signUp(server)).status).toBe(200)

    server.child.kill('SIGTERM')
    expect(await server.exited).toEqual({ code: 0, signal: null })
    // Each applied reload is in the audit trail as the operator's (via reload), old and new values.
    const db = new Database(join(dataDir, 'gatehouse.db'), { readonly: true })
    const reloads = (db.prepare(`SELECT detail FROM auditEvent WHERE type = 'config.changed'`).all() as Array<{ detail: string }>)
      .map((row) => JSON.parse(row.detail) as { via: string; changes: unknown[] })
      .filter((d) => d.via === 'reload')
    db.close()
    expect(reloads.map((d) => d.changes)).toEqual([
      [{ key: 'signUp.mode', from: 'open', to: 'closed' }],
      [{ key: 'signUp.mode', from: 'closed', to: 'open' }],
    ])
  }, 90_000)

  it('without a running server: exit 1 naming the data directory', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-reload-'))
    dirs.push(dataDir)
    const run = await runCli(['reload', '--data-dir', dataDir])
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(`gatehouse reload: no server runs on ${dataDir} (no gatehouse.pid there)\n`)
    // A pid file left by a process that is gone.
    writeFileSync(join(dataDir, 'gatehouse.pid'), '2147483646\n')
    const stale = await runCli(['reload', '--data-dir', dataDir])
    expect(stale.code).toBe(1)
    expect(stale.stderr).toContain('which is gone')
  })
})
