import * as oidc from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/process.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

/**
 * `gatehouse oidc client create|list|delete` on the data directory of a running server (the real
 * CLI process, the real server on loopback): the server sees each change at its next request.
 */

let server: TestServer
const insecure = { execute: [oidc.allowInsecureRequests] }

beforeAll(async () => {
  server = await startTestServer({ config: { oidcProvider: { enabled: true } } })
})
afterAll(async () => {
  await server?.close()
})

const cli = (...args: string[]) => runCli(['oidc', 'client', ...args, '--data-dir', server.dataDir])

describe('gatehouse oidc client', () => {
  it('create --json prints the id and the secret once; the running server accepts them at once; list and delete', async () => {
    const created = await cli('create', '--name', 'Grafana', '--redirect-uri', 'https://grafana.example.com/login/generic_oauth', '--json')
    expect(created.stderr).toBe('')
    expect(created.code).toBe(0)
    const { clientId, clientSecret } = JSON.parse(created.stdout) as { clientId: string; clientSecret: string }
    expect(Object.keys(JSON.parse(created.stdout))).toEqual(['clientId', 'clientSecret'])
    expect(clientId).toMatch(/^[a-z0-9]{24}$/)
    expect(clientSecret).toMatch(/^[A-Za-z0-9]{43}$/)

    const config = await oidc.discovery(new URL(server.base), clientId, clientSecret, oidc.ClientSecretBasic(clientSecret), insecure)
    expect((await oidc.clientCredentialsGrant(config, {})).access_token).toBeTruthy()

    const pub = await cli(
      'create',
      '--name',
      'Immich',
      '--redirect-uri',
      'app.immich:///oauth-callback',
      '--redirect-uri',
      'https://immich.example.com/auth/login',
      '--public',
      '--skip-consent',
      '--json',
    )
    expect(pub.code).toBe(0)
    const immich = JSON.parse(pub.stdout) as { clientId: string; clientSecret: string | null }
    expect(immich.clientSecret).toBeNull()

    const listed = await cli('list', '--json')
    expect(listed.code).toBe(0)
    const clients = JSON.parse(listed.stdout) as {
      clientId: string
      name: string
      public: boolean
      skipConsent: boolean
      redirectUris: string[]
    }[]
    expect(clients.map((c) => [c.name, c.public, c.skipConsent])).toEqual([
      ['Grafana', false, false],
      ['Immich', true, true],
    ])
    expect(clients[1]?.redirectUris).toEqual(['app.immich:///oauth-callback', 'https://immich.example.com/auth/login'])
    expect(listed.stdout).not.toContain(clientSecret)

    const text = await cli('list')
    expect(text.stdout).toContain(`${clientId}  Grafana  (confidential, pkce required, consent asked, ID token RS256)`)

    const deleted = await cli('delete', '--client-id', clientId)
    expect(deleted.code).toBe(0)
    expect(deleted.stdout).toBe(`Deleted OIDC client ${clientId}\n`)
    const refused = await fetch(`${server.base}/oauth2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    })
    expect(refused.status).toBe(401)
    expect(await refused.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' })

    const again = await cli('delete', '--client-id', clientId)
    expect(again.code).toBe(1)
    expect(again.stderr).toBe('gatehouse: OIDC client not found\n')
  })

  it("create --resource-server --id-token-alg ES256 stores both; the server signs that client's ID tokens ES256 and lets it introspect", async () => {
    const created = await cli(
      'create',
      '--name',
      'API gateway',
      '--redirect-uri',
      'https://api.example.com/cb',
      '--resource-server',
      '--id-token-alg',
      'ES256',
      '--json',
    )
    expect(created.stderr).toBe('')
    expect(created.code).toBe(0)
    const { clientId, clientSecret } = JSON.parse(created.stdout) as { clientId: string; clientSecret: string }
    const listed = JSON.parse((await cli('list', '--json')).stdout) as {
      clientId: string
      resourceServer: boolean
      idTokenSignedResponseAlg: string
    }[]
    expect(listed.find((c) => c.clientId === clientId)).toMatchObject({ resourceServer: true, idTokenSignedResponseAlg: 'ES256' })
    expect((await cli('list')).stdout).toContain(
      `${clientId}  API gateway  (confidential, pkce required, consent asked, ID token ES256, resource server)`,
    )
    const meta = (await (await fetch(`${server.base}/.well-known/openid-configuration`)).json()) as {
      id_token_signing_alg_values_supported: string[]
    }
    expect(meta.id_token_signing_alg_values_supported).toEqual(expect.arrayContaining(['RS256', 'ES256', 'EdDSA']))
    // A token of another client: the resource server may introspect it.
    const other = JSON.parse((await cli('create', '--name', 'Other', '--redirect-uri', 'https://o.example.com/cb', '--json')).stdout) as {
      clientId: string
      clientSecret: string
    }
    const otherConfig = await oidc.discovery(
      new URL(server.base),
      other.clientId,
      other.clientSecret,
      oidc.ClientSecretBasic(other.clientSecret),
      insecure,
    )
    const token = (await oidc.clientCredentialsGrant(otherConfig, {})).access_token
    const config = await oidc.discovery(new URL(server.base), clientId, clientSecret, oidc.ClientSecretBasic(clientSecret), insecure)
    expect((await oidc.tokenIntrospection(config, token)).active).toBe(true)

    const wrong = await cli('create', '--name', 'X', '--redirect-uri', 'https://x.example.com/cb', '--id-token-alg', 'HS256')
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain('--id-token-alg must be one of RS256, ES256, EdDSA')
  })

  it('refuses bad input with the usage (exit 2) or the reason (exit 1)', async () => {
    const missing = await cli('create', '--name', 'X')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('create needs --name and at least one --redirect-uri')
    const bad = await cli('create', '--name', 'X', '--redirect-uri', 'javascript:alert(1)')
    expect(bad.code).toBe(1)
    expect(bad.stderr).toBe('gatehouse: Redirect URI must be an absolute URI without a fragment (http(s) or a custom scheme)\n')
  })
  it('--grant-type sets the grants (create and update); the server refuses the others; authorization_code always, client_credentials only with a secret', async () => {
    const created = await cli(
      'create',
      '--name',
      'Backup agent',
      '--redirect-uri',
      'https://backup.example.com/cb',
      '--grant-type',
      'authorization_code',
      '--json',
    )
    expect(created.code).toBe(0)
    const { clientId, clientSecret } = JSON.parse(created.stdout) as { clientId: string; clientSecret: string }
    const grantsOf = async () =>
      (JSON.parse((await cli('list', '--json')).stdout) as { clientId: string; grantTypes: string[] }[]).find(
        (c) => c.clientId === clientId,
      )?.grantTypes
    expect(await grantsOf()).toEqual(['authorization_code'])
    const config = await oidc.discovery(new URL(server.base), clientId, clientSecret, oidc.ClientSecretBasic(clientSecret), insecure)
    await expect(oidc.clientCredentialsGrant(config, {})).rejects.toMatchObject({
      error_description: 'requested grant type is not allowed for this client',
    })

    const updated = await cli('update', '--client-id', clientId, '--grant-type', 'client_credentials', '--grant-type', 'authorization_code')
    expect(updated.code).toBe(0)
    expect(updated.stdout).toContain('grant types: authorization_code client_credentials')
    expect((await oidc.clientCredentialsGrant(config, {})).access_token).toBeTruthy()

    const noCode = await cli('update', '--client-id', clientId, '--grant-type', 'refresh_token')
    expect(noCode.code).toBe(1)
    expect(noCode.stderr).toBe('gatehouse: A client’s grant types include authorization_code (its response type is code)\n')
    const pub = JSON.parse(
      (await cli('create', '--name', 'SPA', '--redirect-uri', 'https://spa.example.com/cb', '--public', '--json')).stdout,
    ) as { clientId: string }
    const publicCredentials = await cli(
      'update',
      '--client-id',
      pub.clientId,
      '--grant-type',
      'authorization_code',
      '--grant-type',
      'client_credentials',
    )
    expect(publicCredentials.code).toBe(1)
    expect(publicCredentials.stderr).toContain('client_credentials grant needs client authentication')
    const unknown = await cli('update', '--client-id', clientId, '--grant-type', 'implicit')
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('--grant-type must be one of authorization_code, refresh_token, client_credentials')
    expect(await grantsOf()).toEqual(['authorization_code', 'client_credentials'])
  })
})
