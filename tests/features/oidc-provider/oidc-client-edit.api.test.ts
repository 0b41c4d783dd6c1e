import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { OidcClientView } from '../../../server/features/oidc-provider/panel-contract.js'
import type { PanelService } from '../../../server/panel/service.js'
import { panelServiceOf } from '../../helpers/panel-session.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * `oidc.updateClient` (the panel's edit dialog) on both engines: every field the dialog edits,
 * validated as `oidc.createClient` validates it (redirect URIs, a pairwise client's one host, the
 * grant types), only the fields sent change, and the token endpoint follows the grants as edited.
 */

let server: TestServer
let panel: PanelService

beforeAll(async () => {
  server = await startTestServer({ config: { oidcProvider: { enabled: true } } })
  panel = panelServiceOf(server)
})
afterAll(async () => {
  await server?.close()
})

async function op<T>(name: string, input: unknown): Promise<{ ok: true; data: T } | { ok: false; code: string; field?: string }> {
  const result = await panel.dispatch(name, input)
  return result.ok ? { ok: true, data: result.data as T } : { ok: false, code: result.error.code, field: result.error.field }
}

const clientCredentials = (clientId: string, secret: string) =>
  fetch(`${server.base}/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  })

describe('oidc.updateClient', () => {
  it('changes name, redirect and post-logout URIs, back-channel URI, PAR, subject type and grants; nothing else moves', async () => {
    const created = await op<{ client: OidcClientView; clientSecret: string }>('oidc.createClient', {
      name: 'Wiki',
      redirectUris: ['https://wiki.example.com/cb'],
      skipConsent: true,
    })
    if (!created.ok) throw new Error(created.code)
    const { client, clientSecret } = created.data
    expect(client.grantTypes).toEqual(['authorization_code', 'refresh_token', 'client_credentials'])
    expect((await clientCredentials(client.clientId, clientSecret)).status).toBe(200)

    const updated = await op<OidcClientView>('oidc.updateClient', {
      clientId: client.clientId,
      name: 'Team wiki',
      redirectUris: ['https://wiki.example.com/oidc/cb'],
      postLogoutRedirectUris: ['https://wiki.example.com/'],
      backchannelLogoutUri: 'https://wiki.example.com/oidc/logout?x=1',
      requirePar: true,
      subjectType: 'pairwise',
      grantTypes: ['authorization_code'],
    })
    expect(updated).toMatchObject({
      ok: true,
      data: {
        clientId: client.clientId,
        name: 'Team wiki',
        redirectUris: ['https://wiki.example.com/oidc/cb'],
        postLogoutRedirectUris: ['https://wiki.example.com/'],
        backchannelLogoutUri: 'https://wiki.example.com/oidc/logout?x=1',
        requirePar: true,
        subjectType: 'pairwise',
        grantTypes: ['authorization_code'],
        skipConsent: true,
        public: false,
      },
    })
    // The same secret; the grant it no longer has is refused.
    const refused = await clientCredentials(client.clientId, clientSecret)
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { error_description: string }).error_description).toBe(
      'requested grant type is not allowed for this client',
    )
    // A rename alone keeps the grants; giving client_credentials back lets it in again.
    expect(await op('oidc.updateClient', { clientId: client.clientId, name: 'Wiki' })).toMatchObject({
      ok: true,
      data: { grantTypes: ['authorization_code'], subjectType: 'pairwise' },
    })
    expect(
      await op('oidc.updateClient', { clientId: client.clientId, grantTypes: ['client_credentials', 'authorization_code'] }),
    ).toMatchObject({ ok: true, data: { grantTypes: ['authorization_code', 'client_credentials'] } })
    expect((await clientCredentials(client.clientId, clientSecret)).status).toBe(200)
  })

  it('refuses what creation refuses, beside the field, and changes nothing', async () => {
    const created = await op<{ client: OidcClientView }>('oidc.createClient', {
      name: 'Phone',
      redirectUris: ['https://phone.example.com/cb'],
      public: true,
      subjectType: 'pairwise',
    })
    if (!created.ok) throw new Error(created.code)
    const { clientId } = created.data.client
    expect(created.data.client.grantTypes).toEqual(['authorization_code', 'refresh_token'])
    const cases: Array<[Record<string, unknown>, string, string | undefined]> = [
      [{ redirectUris: ['https://phone.example.com/cb', 'https://other.example.com/cb'] }, 'PAIRWISE_NEEDS_ONE_HOST', 'redirectUris'],
      [{ redirectUris: ['javascript:alert(1)'] }, 'INVALID_REDIRECT_URI', 'redirectUris'],
      [{ postLogoutRedirectUris: ['https://phone.example.com/#x'] }, 'INVALID_REDIRECT_URI', 'redirectUris'],
      [{ backchannelLogoutUri: 'http://phone.example.com/logout' }, 'INVALID_BACKCHANNEL_LOGOUT_URI', 'backchannelLogoutUri'],
      [{ name: '  ' }, 'NAME_REQUIRED', 'name'],
      [{ grantTypes: ['refresh_token'] }, 'AUTHORIZATION_CODE_GRANT_REQUIRED', 'grantTypes'],
      [{ grantTypes: ['authorization_code', 'client_credentials'] }, 'PUBLIC_CLIENT_CREDENTIALS', 'grantTypes'],
      [{ grantTypes: ['implicit'] }, 'VALIDATION_ERROR', undefined],
      [{ public: false }, 'VALIDATION_ERROR', undefined],
    ]
    for (const [patch, code, field] of cases) {
      const answer = await op('oidc.updateClient', { clientId, ...patch })
      expect(answer, JSON.stringify(patch)).toMatchObject({ ok: false, code, ...(field ? { field } : {}) })
    }
    const listed = await op<{ clients: OidcClientView[] }>('oidc.clients', {})
    expect(listed.ok && listed.data.clients.find((c) => c.clientId === clientId)).toMatchObject({
      name: 'Phone',
      redirectUris: ['https://phone.example.com/cb'],
      postLogoutRedirectUris: [],
      backchannelLogoutUri: null,
      grantTypes: ['authorization_code', 'refresh_token'],
      public: true,
    })
  })
})
