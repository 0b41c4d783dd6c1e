import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findClient } from '../../../server/features/oidc-provider/store.js'
import { runCli } from '../../helpers/process.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/** `gatehouse oidc client create|update|rotate-secret` on a running server's data directory: the id stays; update keeps the secret. */

let server: TestServer
const token = async (clientId: string, secret: string) =>
  fetch(`${server.base}/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  })

beforeAll(async () => {
  server = await startTestServer({ config: { oidcProvider: { enabled: true } } })
})

afterAll(async () => {
  await server?.close()
})

describe('gatehouse oidc client', () => {
  it('create with --backchannel-logout-uri and --require-par; update keeps id and secret; rotate-secret shows a new one once', async () => {
    const dir = ['--data-dir', server.dataDir]
    const created = await runCli([
      'oidc',
      'client',
      'create',
      '--name',
      'Wiki',
      '--redirect-uri',
      'https://wiki.example/cb',
      '--json',
      '--backchannel-logout-uri',
      'http://192.168.1.20/redirect_uri?logout=backchannel',
      '--require-par',
      ...dir,
    ])
    expect(created.code).toBe(0)
    const { clientId, clientSecret } = JSON.parse(created.stdout) as { clientId: string; clientSecret: string }
    expect(await findClient(server.gatehouse.ctx, clientId)).toMatchObject({
      backchannelLogoutUri: 'http://192.168.1.20/redirect_uri?logout=backchannel',
      requirePar: true,
    })
    expect((await token(clientId, clientSecret)).status).toBe(200)

    const updated = await runCli([
      'oidc',
      'client',
      'update',
      '--client-id',
      clientId,
      '--name',
      'Team wiki',
      '--redirect-uri',
      'https://wiki.example/cb2',
      '--post-logout-redirect-uri',
      'https://wiki.example/bye',
      '--backchannel-logout-uri',
      'https://wiki.example/bc',
      '--no-require-par',
      '--json',
      ...dir,
    ])
    expect(updated.code).toBe(0)
    expect(JSON.parse(updated.stdout)).toMatchObject({
      clientId,
      name: 'Team wiki',
      redirectUris: ['https://wiki.example/cb2'],
      postLogoutRedirectUris: ['https://wiki.example/bye'],
      backchannelLogoutUri: 'https://wiki.example/bc',
      requirePar: false,
    })
    expect(updated.stdout).not.toContain('sha256:')
    expect((await token(clientId, clientSecret)).status).toBe(200)

    const refused = await runCli([
      'oidc',
      'client',
      'update',
      '--client-id',
      clientId,
      '--backchannel-logout-uri',
      'http://wiki.example/bc',
      ...dir,
    ])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/Back-channel logout URI/)

    const removed = await runCli(['oidc', 'client', 'update', '--client-id', clientId, '--backchannel-logout-uri', '', ...dir])
    expect(removed.code).toBe(0)
    expect((await findClient(server.gatehouse.ctx, clientId))?.backchannelLogoutUri).toBeNull()

    const rotated = await runCli(['oidc', 'client', 'rotate-secret', '--client-id', clientId, ...dir])
    expect(rotated.code).toBe(0)
    const fresh = /new client secret: (\S+)/.exec(rotated.stdout)?.[1] as string
    expect(fresh).toMatch(/^[A-Za-z0-9]{43}$/)
    expect((await token(clientId, clientSecret)).status).toBe(401)
    expect((await token(clientId, fresh)).status).toBe(200)

    const missing = await runCli(['oidc', 'client', 'update', '--name', 'x', ...dir])
    expect(missing.code).toBe(2)
    const unknown = await runCli(['oidc', 'client', 'rotate-secret', '--client-id', 'nope', ...dir])
    expect(unknown.code).toBe(1)
  }, 120_000)
})
