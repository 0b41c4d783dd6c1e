import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { HttpClient, signUp } from '../helpers/http.js'
import { type RunningServer, startServerProcess } from '../helpers/process.js'

/**
 * Issue 37 §8: `gatehouse serve` without SMTP says once, at start-up, that mail is development
 * mail kept in the control panel's Outbox (with the panel's address), and not again when messages
 * are kept. The built bundle as a real process on loopback.
 */

const NOTICE =
  /no SMTP server configured \(--smtp-url or mail\.smtp\): development mail, nothing is sent; every message is kept in the control panel's Email → Outbox \((http:\/\/[^\s/]+)\/#\/email\), where its links can be opened/g

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-dev-mail-'))
let server: RunningServer | undefined
afterAll(async () => {
  server?.child.kill('SIGTERM')
  await server?.exited
  rmSync(dir, { recursive: true, force: true })
})

/** Waits (bounded) until the server's output matches. */
async function outputMatching(running: RunningServer, pattern: RegExp, timeoutMs = 10_000): Promise<string> {
  for (const started = Date.now(); Date.now() - started < timeoutMs; ) {
    if (pattern.test(running.output())) return running.output()
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no output matching ${pattern} within ${timeoutMs} ms:\n${running.output()}`)
}

describe('gatehouse serve without SMTP', () => {
  it('says once, at start-up, that every message is kept in the Outbox, and where', async () => {
    server = await startServerProcess(['--port', '0', '--panel-port', '0', '--rate-limit', 'off', '--data-dir', join(dir, 'data')])
    const started = await outputMatching(server, /Outbox \(http/)
    const notices = [...started.matchAll(NOTICE)]
    expect(notices).toHaveLength(1)
    const panelOrigin = /Control panel: (http:\/\/\S+?)\/ /.exec(started)?.[1]
    expect(notices[0]?.[1]).toBe(panelOrigin)

    const user = await signUp(server.url)
    const reset = await new HttpClient(server.url).post('/request-password-reset', { email: user.email })
    expect(reset.status).toBe(200)
    const after = await outputMatching(
      server,
      new RegExp(`mail \\(password-reset\\) to ${user.email.replace(/[.+]/g, '\\$&')} kept in the outbox as \\S+`),
    )
    expect([...after.matchAll(NOTICE)]).toHaveLength(1)
    expect(after).not.toMatch(/WARN.*no SMTP server configured/i)
  })
})
