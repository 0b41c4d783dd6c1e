/**
 * OpenID Connect clients changed behind an instance's back, with two real `gatehouse serve`
 * processes on one PostgreSQL: each instance caches the clients it authenticates (the token
 * endpoint reads one on every request), and a client's secret rotated, its redirect URIs changed
 * or the client deleted — by the CLI or the other instance's panel — must count on the very next
 * request to either instance, however warm its cache. A new secret that the cache has not heard
 * of works at once; the old one never again.
 * Needs `npm run build:server` (dist/server/main.mjs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../helpers/engines.js'
import { type Instance, SHARED_SECRET, startInstance } from '../helpers/instances.js'
import { runCli } from '../helpers/process.js'

const unavailable = postgresUnavailable()
warnSkipped('OIDC clients changed on another instance (tests/multi/oidc-clients.test.ts)', unavailable)

describe.skipIf(unavailable)('OIDC clients changed on another instance or by the CLI', () => {
  let postgres: PostgresServer
  let databaseUrl: string
  let a: Instance
  let b: Instance

  beforeAll(async () => {
    postgres = await startPostgres()
    databaseUrl = await postgres.createDatabase('oidc_clients')
    const config = { rateLimit: { enabled: false }, oidcProvider: { enabled: true } }
    a = await startInstance('oidc-clients-a', { databaseUrl, config })
    b = await startInstance('oidc-clients-b', { databaseUrl, config })
  }, 120_000)

  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await postgres?.stop()
  })

  const cli = async (...args: string[]) => {
    const run = await runCli([...args, '--data-dir', a.dataDir], { GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_SECRET: SHARED_SECRET })
    expect(run.code, run.stderr).toBe(0)
    return run.stdout
  }

  /** A client-credentials grant on `on`: its status and error code. */
  const grant = async (on: Instance, clientId: string, secret: string) => {
    const response = await fetch(`${on.base}/oauth2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    })
    const body = (await response.json()) as { error?: string; access_token?: string }
    return { status: response.status, error: body.error ?? null }
  }

  /**
   * An authorization request on `on` (no session): 303 on to the sign-in when the client and
   * redirect URI are accepted, else 302 to the hosted error page.
   */
  const authorize = (on: Instance, clientId: string, redirectUri: string) =>
    fetch(
      `${on.base}/oauth2/authorize?${new URLSearchParams({
        client_id: clientId,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'openid',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })}`,
      { redirect: 'manual' },
    )

  it("a rotated secret, an edit and a deletion count on the other instance's next request", async () => {
    const created = JSON.parse(
      await cli('oidc', 'client', 'create', '--name', 'NAS', '--redirect-uri', 'https://nas.example/cb', '--json'),
    ) as {
      clientId: string
      clientSecret: string
    }
    const { clientId, clientSecret: first } = created
    // Both instances authenticate the client, so both hold it in their caches.
    for (const on of [a, b]) expect(await grant(on, clientId, first)).toEqual({ status: 200, error: null })

    // The CLI rotates the secret: the old one is refused by both at once, the new one accepted.
    const rotated = await cli('oidc', 'client', 'rotate-secret', '--client-id', clientId, '--json')
    const second = (JSON.parse(rotated) as { clientSecret: string }).clientSecret
    expect(second).not.toBe(first)
    for (const on of [b, a]) {
      expect(await grant(on, clientId, first)).toEqual({ status: 401, error: 'invalid_client' })
      expect(await grant(on, clientId, second)).toEqual({ status: 200, error: null })
    }

    // Instance a's panel rotates it again: b, warm with the second secret, refuses it next.
    const viaPanel = await a.panelCall<{ clientSecret: string }>('oidc.rotateSecret', { clientId })
    expect(viaPanel.status, viaPanel.text).toBe(200)
    const third = viaPanel.body.clientSecret
    expect(await grant(b, clientId, second)).toEqual({ status: 401, error: 'invalid_client' })
    expect(await grant(b, clientId, third)).toEqual({ status: 200, error: null })

    // An edit made by the CLI counts at b's authorization endpoint (b's cache is warm from the
    // grant above): the new redirect URI is taken, on to the sign-in; the old one is refused.
    await cli('oidc', 'client', 'update', '--client-id', clientId, '--redirect-uri', 'https://nas.example/new-cb')
    const taken = await authorize(b, clientId, 'https://nas.example/new-cb')
    expect(taken.status).toBe(303)
    expect(taken.headers.get('location')).toMatch(/\/oidc\/interaction\//)
    const refused = await authorize(b, clientId, 'https://nas.example/cb')
    expect(refused.status).toBe(302)
    expect(new URL(refused.headers.get('location') ?? '', b.base).searchParams.get('error')).toBe('invalid_redirect_uri')
    expect(await grant(b, clientId, third)).toEqual({ status: 200, error: null })

    // Deleted by the CLI: neither instance issues it another token.
    await cli('oidc', 'client', 'delete', '--client-id', clientId)
    for (const on of [b, a]) expect(await grant(on, clientId, third)).toEqual({ status: 401, error: 'invalid_client' })
  }, 120_000)
})
