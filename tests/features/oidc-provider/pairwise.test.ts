import { createHmac } from 'node:crypto'
import { decodeJwt } from 'jose'
import * as oidc from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, getClient } from '../../../server/features/oidc-provider/clients.js'
import { fastTokenHandOvers } from '../../../server/features/oidc-provider/index.js'
import { createRegistrationToken } from '../../../server/features/oidc-provider/registration.js'
import type { SignedUp } from '../../helpers/http.js'
import { runCli } from '../../helpers/process.js'
import { serverLog, startTestServer, type TestServer } from '../../helpers/server.js'
import { discover, insecure, type Receiver, SECURE_CALLBACK, signedInJar, signIn, signOutOf, startReceiver, verifiedPerson } from './rp.js'

/**
 * Pairwise subject identifiers (issue 47 §5, OpenID Connect Core §8.1): through real code flows
 * (openid-client), a pairwise client's `sub` differs from another sector's and from the user id,
 * is stable for one client, and is the same in the ID token, userinfo, a refresh on the fast token
 * path and the back-channel logout token. Self-registered clients are pairwise by default.
 */

let server: TestServer
let person: SignedUp
let receiver: Receiver
const by = { via: 'cli' as const }

/** The expected pairwise sub, computed here with node:crypto from the documented formula. */
const expectedSub = (sector: string, userId: string): string =>
  createHmac('sha256', server.gatehouse.ctx.secret).update(`gatehouse pairwise sub\0${sector}\0${userId}`).digest('base64url')

beforeAll(async () => {
  server = await startTestServer({ config: { oidcProvider: { enabled: true, registration: { enabled: true } } } })
  person = await verifiedPerson(server)
  receiver = await startReceiver()
})

afterAll(async () => {
  await receiver?.close()
  await server?.close()
})

async function pairwiseClient(host: string, extra: { backchannelLogoutUri?: string } = {}) {
  const { client, clientSecret } = await createClient(
    server.gatehouse.ctx,
    { name: host, redirectUris: [`http://${host}/callback`], skipConsent: true, subjectType: 'pairwise', ...extra },
    by,
  )
  return { client, config: await discover(server, client.clientId, clientSecret as string), redirectUri: `http://${host}/callback` }
}

describe('pairwise subject identifiers', () => {
  it('differ between two clients, are stable for one, and agree across ID token, userinfo and a fast-path refresh', async () => {
    const a = await pairwiseClient('app-a.example.test')
    const b = await pairwiseClient('app-b.example.test')
    const userId = person.user.id
    const jar = await signedInJar(server, person)
    const first = await signIn(server, a.config, jar, { scope: 'openid offline_access', redirectUri: a.redirectUri })
    const again = await signIn(server, a.config, jar, { redirectUri: a.redirectUri })
    const other = await signIn(server, b.config, jar, { redirectUri: b.redirectUri })
    const subA = first.claims()?.sub
    expect(subA).toBe(expectedSub('app-a.example.test', userId))
    expect(again.claims()?.sub).toBe(subA)
    expect(other.claims()?.sub).toBe(expectedSub('app-b.example.test', userId))
    expect(other.claims()?.sub).not.toBe(subA)
    expect(subA).not.toBe(userId)
    // Userinfo agrees with the ID token.
    const info = await oidc.fetchUserInfo(a.config, first.access_token, subA as string)
    expect(info.sub).toBe(subA)
    expect(info.email).toBeUndefined()
    // A refresh answered by the fast token path carries the same sub.
    fastTokenHandOvers.length = 0
    const refreshed = await oidc.refreshTokenGrant(a.config, first.refresh_token as string)
    expect(fastTokenHandOvers).toEqual([])
    expect(decodeJwt(refreshed.id_token as string).sub).toBe(subA)
    // Introspection by the client too.
    const introspected = await oidc.tokenIntrospection(a.config, refreshed.access_token)
    expect(introspected.sub).toBe(subA)
  })

  it('a public client keeps the user id', async () => {
    const { client, clientSecret } = await createClient(
      server.gatehouse.ctx,
      { name: 'Public sub', redirectUris: ['http://app-c.example.test/callback'], skipConsent: true },
      by,
    )
    expect(client.subjectType).toBe('public')
    const jar = await signedInJar(server, person)
    const tokens = await signIn(server, await discover(server, client.clientId, clientSecret as string), jar, {
      redirectUri: 'http://app-c.example.test/callback',
    })
    expect(tokens.claims()?.sub).toBe(person.user.id)
  })

  it('the back-channel logout token names the person by the same pairwise sub', async () => {
    serverLog.allowWarning(/^Back-channel logout to client/)
    const d = await pairwiseClient('app-d.example.test', { backchannelLogoutUri: receiver.url })
    const jar = await signedInJar(server, person)
    const tokens = await signIn(server, d.config, jar, { redirectUri: d.redirectUri })
    const before = receiver.received.length
    await signOutOf(server, jar)
    const received = await receiver.waitFor(before + 1)
    const logout = decodeJwt(received[before]?.logoutToken as string)
    expect(logout.sub).toBe(tokens.claims()?.sub)
    expect(logout.sub).toBe(expectedSub('app-d.example.test', person.user.id))
  })

  it('a self-registered client is pairwise by default (its redirect host the sector) and may ask for public', async () => {
    const { token } = await createRegistrationToken(server.gatehouse.ctx, {}, by)
    const registered = await oidc.dynamicClientRegistration(new URL(server.base), { redirect_uris: [SECURE_CALLBACK] }, undefined, {
      initialAccessToken: token,
      ...insecure,
    })
    const meta = registered.clientMetadata()
    expect(meta.subject_type).toBe('pairwise')
    expect((await getClient(server.gatehouse.ctx, meta.client_id)).subjectType).toBe('pairwise')
    const jar = await signedInJar(server, person)
    const tokens = await signIn(server, await discover(server, meta.client_id, meta.client_secret as string), jar, {
      redirectUri: SECURE_CALLBACK,
    })
    expect(tokens.claims()?.sub).toBe(expectedSub('rp.example.test', person.user.id))

    const asked = await oidc.dynamicClientRegistration(
      new URL(server.base),
      { redirect_uris: [SECURE_CALLBACK], subject_type: 'public' },
      undefined,
      { initialAccessToken: token, ...insecure },
    )
    expect(asked.clientMetadata().subject_type).toBe('public')
    expect((await discovery()).subject_types_supported).toEqual(['public', 'pairwise'])
  })

  it('oidc client create --subject-type pairwise; one redirect host only; update switches it', { timeout: 240_000 }, async () => {
    const dir = ['--data-dir', server.dataDir]
    const cli = (args: string[]) => runCli(args, {}, 60_000)
    const created = await cli([
      'oidc',
      'client',
      'create',
      '--name',
      'CLI pairwise',
      '--redirect-uri',
      'https://cli.example.test/cb',
      '--subject-type',
      'pairwise',
      '--json',
      ...dir,
    ])
    expect(created.code).toBe(0)
    const { clientId } = JSON.parse(created.stdout) as { clientId: string }
    expect((await getClient(server.gatehouse.ctx, clientId)).subjectType).toBe('pairwise')
    const twoHosts = await cli([
      'oidc',
      'client',
      'create',
      '--name',
      'Two hosts',
      '--redirect-uri',
      'https://one.example.test/cb',
      '--redirect-uri',
      'https://two.example.test/cb',
      '--subject-type',
      'pairwise',
      ...dir,
    ])
    expect(twoHosts.code).not.toBe(0)
    expect(twoHosts.stderr).toContain('A pairwise client’s redirect URIs must all name one host (its sector)')
    const bad = await cli([
      'oidc',
      'client',
      'create',
      '--name',
      'x',
      '--redirect-uri',
      'https://x.test/cb',
      '--subject-type',
      'secret',
      ...dir,
    ])
    expect(bad.code).toBe(2)
    const updated = await cli(['oidc', 'client', 'update', '--client-id', clientId, '--subject-type', 'public', '--json', ...dir])
    expect(updated.code).toBe(0)
    expect(JSON.parse(updated.stdout)).toMatchObject({ clientId, subjectType: 'public' })
  })
})

const discovery = async () =>
  (await (await fetch(`${server.base}/.well-known/openid-configuration`)).json()) as { subject_types_supported: string[] }
