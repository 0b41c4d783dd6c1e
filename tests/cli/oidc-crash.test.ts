import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { CookieJar, signUp } from '../helpers/http.js'
import { markVerifiedInDataDir } from '../helpers/members.js'
import { type RunningServer, runCli, startServerProcess } from '../helpers/process.js'

/**
 * The OpenID provider's token endpoint survives SIGKILL: rotating refreshes run on several grants
 * at once and the process is killed mid-load, three times. Every refresh that was answered must
 * be on disk whole after the kill: the token it presented consumed (presenting it again is a
 * reuse), the token it returned stored, and its audit entry written. A request in flight at the
 * kill is either whole or absent. After the last restart every grant's newest answered token
 * still refreshes, unless a request in flight at the kill had consumed it (then it is refused).
 */
const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-oidc-crash-'))
/** Every server started here: one still running when the test ends early (a failure, the time limit) is stopped. */
const started: RunningServer[] = []
afterAll(async () => {
  for (const server of started) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL')
  await Promise.all(started.map((server) => server.exited))
  rmSync(dataDir, { recursive: true, force: true })
})

async function start(): Promise<RunningServer> {
  const server = await startServerProcess(['--port', '0', '--data-dir', dataDir])
  started.push(server)
  return server
}

const SECRET = 'process-test-secret-0123456789abcdef'
const CALLBACK = 'http://127.0.0.1:9/callback'
const CHAINS = 4

interface Answered {
  presented: string
  returned: string
}

/** One authorization code flow through the signed-in jar; returns the first refresh token. */
async function firstRefreshToken(api: string, clientId: string, basic: string, jar: CookieJar): Promise<string> {
  const origin = new URL(api).origin
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  let url = `${api}/oauth2/authorize?${new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: CALLBACK,
    scope: 'openid offline_access',
    prompt: 'consent',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })}`
  for (let hop = 0; hop < 10 && url.startsWith(origin); hop++) {
    const res = await fetch(url, { headers: { cookie: jar.header() }, redirect: 'manual' })
    jar.store(res)
    await res.arrayBuffer()
    url = new URL(res.headers.get('location') as string, url).href
  }
  const code = new URL(url).searchParams.get('code')
  expect(code, url).toBeTruthy()
  const res = await fetch(`${api}/oauth2/token`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: code as string, redirect_uri: CALLBACK, code_verifier: verifier }),
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { refresh_token: string }).refresh_token
}

const refresh = (api: string, basic: string, token: string) =>
  fetch(`${api}/oauth2/token`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: `grant_type=refresh_token&refresh_token=${token}`,
  })

describe('OIDC token endpoint crash safety', () => {
  it('every answered rotating refresh is on disk whole (old token consumed, new one stored, audited) across three SIGKILLs', async () => {
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ oidcProvider: { enabled: true }, rateLimit: { enabled: false } }))
    const created = await runCli(
      ['oidc', 'client', 'create', '--name', 'Crash', '--redirect-uri', CALLBACK, '--skip-consent', '--json', '--data-dir', dataDir],
      { GATEHOUSE_SECRET: SECRET },
    )
    expect(created.code, created.stderr).toBe(0)
    const { clientId, clientSecret } = JSON.parse(created.stdout) as { clientId: string; clientSecret: string }
    const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`

    const answered: Answered[] = []
    const unanswered: string[] = []
    /** Each grant's newest answered refresh token, after the last round. */
    let newest: string[] = []
    const inFlightAtKill: number[] = []
    for (let round = 0; round < 3; round++) {
      const server = await start()
      const person = await signUp(server.url)
      markVerifiedInDataDir(dataDir, person.email)
      const jar = new CookieJar()
      for (const [name, value] of person.client.jar.cookies) jar.cookies.set(name, value)
      const chains: string[] = []
      for (let i = 0; i < CHAINS; i++) chains.push(await firstRefreshToken(server.url, clientId, basic, jar))
      let stop = false
      let inFlight = 0
      const before = answered.length
      const loops = chains.map(async (_, i) => {
        while (!stop) {
          const presented = chains[i] as string
          inFlight++
          try {
            const res = await refresh(server.url, basic, presented)
            const body = (await res.json()) as { refresh_token?: string }
            expect(res.status, JSON.stringify(body)).toBe(200)
            answered.push({ presented, returned: body.refresh_token as string })
            chains[i] = body.refresh_token as string
          } catch (error) {
            if (!stop) throw error
            unanswered.push(presented)
            return
          } finally {
            inFlight--
          }
        }
      })
      // Kill mid-load: once this round has answered some refreshes (bounded wait), plus a varying delay.
      const deadline = Date.now() + 15_000
      while (Date.now() < deadline && answered.length < before + 20) await new Promise((r) => setTimeout(r, 10))
      await new Promise((r) => setTimeout(r, round * 30))
      server.child.kill('SIGKILL')
      inFlightAtKill.push(inFlight)
      stop = true
      await Promise.allSettled(loops)
      expect((await server.exited).signal).toBe('SIGKILL')
      newest = [...chains]

      const db = new Database(join(dataDir, 'gatehouse.db'), { readonly: true })
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
        const token = db.prepare("select consumedAt from oidcModel where kind = 'RefreshToken' and id = ?")
        for (const { presented, returned } of answered) {
          expect((token.get(presented) as { consumedAt: number | null } | undefined)?.consumedAt, `consumed ${presented}`).toBeTypeOf(
            'number',
          )
          expect(token.get(returned), `stored ${returned}`).toBeDefined()
        }
        const audited = db
          .prepare(
            "select count(*) as n from auditEvent where type = 'oidc.token-issued' and json_extract(detail, '$.grantType') = 'refresh_token'",
          )
          .get() as { n: number }
        expect(audited.n).toBeGreaterThanOrEqual(answered.length)
        expect(audited.n).toBeLessThanOrEqual(answered.length + unanswered.length)
      } finally {
        db.close()
      }
    }
    expect(answered.length).toBeGreaterThanOrEqual(60)
    console.log(`oidc crash: refreshes answered ${answered.length}, in flight at each kill: ${inFlightAtKill.join(' ')}`)
    expect(inFlightAtKill.some((n) => n > 0)).toBe(true)

    // After the last restart: a grant's newest answered token refreshes unless an unanswered request consumed it.
    const db = new Database(join(dataDir, 'gatehouse.db'), { readonly: true })
    const consumed = newest.map(
      (t) =>
        (db.prepare("select consumedAt from oidcModel where kind = 'RefreshToken' and id = ?").get(t) as { consumedAt: number | null })
          .consumedAt !== null,
    )
    db.close()
    const server = await start()
    try {
      // The live tokens first: presenting a consumed one is a reuse, which revokes its grant, and
      // the chains of one person and client share their grant (consent is remembered per user and
      // client), so a consumed token asked first would take the live ones down with it.
      const order = [...newest.keys()].sort((a, b) => Number(consumed[a]) - Number(consumed[b]))
      for (const i of order) {
        const res = await refresh(server.url, basic, newest[i] as string)
        const body = (await res.json()) as { error?: string }
        if (consumed[i]) expect([res.status, body.error]).toEqual([400, 'invalid_grant'])
        else expect(res.status, JSON.stringify(body)).toBe(200)
      }
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  }, 180_000)
})
