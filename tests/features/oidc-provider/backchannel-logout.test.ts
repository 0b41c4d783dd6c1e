import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, getClient } from '../../../server/features/oidc-provider/clients.js'
import { runLogoutDeliveries } from '../../../server/features/oidc-provider/index.js'
import { createRegistrationToken } from '../../../server/features/oidc-provider/registration.js'
import { listLogoutDeliveries } from '../../../server/features/oidc-provider/store.js'
import type { CookieJar } from '../../helpers/http.js'
import { administrator, type Member, verifiedSignUp } from '../../helpers/members.js'
import { adminCaller, panelServiceOf } from '../../helpers/panel-session.js'
import { deadBesideHealthy } from './backchannel-isolation.js'
import { serverLog, startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import {
  browse,
  discover,
  insecure,
  PASSWORD,
  RP,
  type Receiver,
  SECURE_CALLBACK,
  signedInJar,
  signIn,
  signOutOf,
  startReceiver,
  verifiedPerson,
} from './rp.js'

/**
 * OpenID Connect Back-Channel Logout 1.0: each of the five ways a Gatehouse session ends sends
 * the clients it signed in to a signed logout token by form POST, from a stored queue (the
 * receiver down: delivered later, also after a restart).
 */

let server: TestServer
let receiver: Receiver
let admin: Member
let clientId: string
let config: oidc.Configuration

const EVENT = 'http://schemas.openid.net/event/backchannel-logout'

async function person() {
  const signedUp = await verifiedSignUp(server, { password: PASSWORD })
  const jar = await signedInJar(server, signedUp)
  const tokens = await signIn(server, config, jar)
  const claims = tokens.claims() as { sid?: string; sub: string }
  expect(claims.sid).toEqual(expect.any(String))
  return { id: signedUp.user.id, email: signedUp.email, jar, tokens, sid: claims.sid as string }
}

/** The Gatehouse session a browser's cookies name (its id and token), or null when it has none. */
async function sessionOf(jar: CookieJar): Promise<{ id: string; token: string } | null> {
  const res = await fetch(`${server.base}/get-session`, { headers: { cookie: jar.header(), origin: server.origin } })
  expect(res.status).toBe(200)
  const body = (await res.json()) as { session: { id: string; token: string } } | null
  return body ? { id: body.session.id, token: body.session.token } : null
}

/** The logout token is verified as an RP does (signature, typ, claims), and names this sub and sid. */
async function expectLogoutToken(token: string, sub: string, sid: string): Promise<void> {
  expect(decodeProtectedHeader(token).typ).toBe('logout+jwt')
  const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${server.base}/oauth2/jwks`)), {
    issuer: server.base,
    audience: clientId,
    typ: 'logout+jwt',
    currentDate: new Date(server.clock.now()),
  })
  expect(payload).toEqual({
    iss: server.base,
    aud: clientId,
    iat: expect.any(Number),
    exp: expect.any(Number),
    jti: expect.any(String),
    sub,
    sid,
    events: { [EVENT]: {} },
  })
  expect(payload).not.toHaveProperty('nonce')
}

beforeAll(async () => {
  server = await startTestServer({ config: { oidcProvider: { enabled: true } } })
  receiver = await startReceiver()
  const created = await createClient(
    server.gatehouse.ctx,
    {
      name: 'Back-channel RP',
      redirectUris: [`${RP}/callback`],
      postLogoutRedirectUris: [`${RP}/signed-out`],
      skipConsent: true,
      backchannelLogoutUri: receiver.url,
    },
    { via: 'cli' },
  )
  clientId = created.client.clientId
  config = await discover(server, clientId, created.clientSecret as string)
  admin = await administrator(server)
})

afterAll(async () => {
  await receiver?.close()
  await server?.close()
})

describe('back-channel logout', () => {
  it('is announced by discovery; ID tokens carry sid', async () => {
    const meta = config.serverMetadata()
    expect(meta.backchannel_logout_supported).toBe(true)
    expect(meta.backchannel_logout_session_supported).toBe(true)
    const someone = await person()
    expect(decodeJwt(someone.tokens.id_token as string).sid).toBe(someone.sid)
  })

  it('the hosted sign-out page: one logout token, its query kept, sent after the answer', async () => {
    const before = receiver.received.length
    const someone = await person()
    await signOutOf(server, someone.jar)
    const received = await receiver.waitFor(before + 1)
    expect(received).toHaveLength(before + 1)
    const notice = received[before]
    expect(notice?.path).toBe('/backchannel?logout=backchannel')
    expect(notice?.contentType).toBe('application/x-www-form-urlencoded')
    await expectLogoutToken(notice?.logoutToken as string, someone.id, someone.sid)
    const row = (await listLogoutDeliveries(server.gatehouse.ctx)).find((r) => r.sid === someone.sid)
    expect(row?.sentAt).toBeInstanceOf(Date)
    expect(row?.attempts).toBe(1)
  })

  it('RP-initiated end-session: one logout token (oidc-provider’s own notice is the same queued one)', async () => {
    const before = receiver.received.length
    const someone = await person()
    const endSession = oidc.buildEndSessionUrl(config, {
      id_token_hint: someone.tokens.id_token as string,
      post_logout_redirect_uri: `${RP}/signed-out`,
      state: 'bye',
    })
    const page = await browse(server, someone.jar, endSession.href)
    expect(page.pathname).toBe('/api/auth/ui/sign-out')
    await signOutOf(server, someone.jar)
    const done = await browse(server, someone.jar, page.searchParams.get('action') as string, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.origin },
      body: new URLSearchParams({ xsrf: page.searchParams.get('xsrf') as string, logout: 'yes' }).toString(),
    })
    expect(done.href).toBe(`${RP}/signed-out?state=bye`)
    await receiver.waitFor(before + 1)
    // Nothing more arrives for the same session: no delivery to this client for it is left unsent or in flight.
    await expect
      .poll(async () =>
        (await listLogoutDeliveries(server.gatehouse.ctx))
          .filter((r) => r.sid === someone.sid && r.clientId === clientId)
          .every((r) => r.sentAt !== null && r.claimedUntil === null),
      )
      .toBe(true)
    const mine = receiver.received.slice(before).filter((r) => decodeJwt(r.logoutToken).sid === someone.sid)
    expect(mine).toHaveLength(1)
    await expectLogoutToken(mine[0]?.logoutToken as string, someone.id, someone.sid)
  })

  for (const way of ['an admin revoking the sessions', 'a ban', 'deleting the person'] as const) {
    it(`${way}: every session of the person gets its logout token`, async () => {
      const before = receiver.received.length
      const someone = await person()
      // A second browser of the same person, signed in to the same client.
      const jar2 = await signedInJar(server, someone)
      const second = await signIn(server, config, jar2)
      const sid2 = second.claims()?.sid as string
      expect(sid2).not.toBe(someone.sid)
      const answer =
        way === 'a ban'
          ? await admin.client.admin.banUser({ userId: someone.id })
          : way === 'deleting the person'
            ? await admin.client.admin.removeUser({ userId: someone.id })
            : await admin.client.admin.revokeUserSessions({ userId: someone.id })
      expect(answer.error).toBeNull()
      const received = await receiver.waitFor(before + 2)
      const notices = received.slice(before)
      expect(notices.map((r) => decodeJwt(r.logoutToken).sid).sort()).toEqual([someone.sid, sid2].sort())
      for (const notice of notices) await expectLogoutToken(notice.logoutToken, someone.id, decodeJwt(notice.logoutToken).sid as string)
    })
  }

  for (const way of ['the admin API (revoke-user-session)', 'the panel (users.revokeSession)'] as const) {
    it(`an admin revoking one session through ${way}: that session's logout token only; the person's other session at the same RP stays`, async () => {
      const ctx = server.gatehouse.ctx
      const before = receiver.received.length
      const someone = await person()
      // A second browser of the same person, signed in to the same client.
      const jar2 = await signedInJar(server, someone)
      const sid2 = (await signIn(server, config, jar2)).claims()?.sid as string
      expect(sid2).not.toBe(someone.sid)
      const first = await sessionOf(someone.jar)
      const second = await sessionOf(jar2)
      expect(first?.id).not.toBe(second?.id)
      if (way === 'the admin API (revoke-user-session)') {
        const answer = await admin.client.admin.revokeUserSession({ sessionToken: first?.token as string })
        expect(answer.error).toBeNull()
        expect(answer.data).toEqual({ success: true })
      } else {
        const caller = await adminCaller(server, `panel-admin-${someone.id}@example.com`)
        const result = await panelServiceOf(server).dispatch('users.revokeSession', { userId: someone.id, sessionId: first?.id }, caller)
        expect(result).toEqual({ ok: true, data: { success: true } })
      }
      const sids = new Set([someone.sid, sid2])
      const mine = () => receiver.received.slice(before).filter((r) => sids.has(decodeJwt(r.logoutToken).sid as string))
      await receiver.waitFor(before + 1)
      // The revoked session's notice was queued with the revocation and has been sent; none was
      // ever queued for the other (a delivery run finds nothing more to send).
      await expect
        .poll(async () =>
          (await listLogoutDeliveries(ctx))
            .filter((r) => sids.has(r.sid))
            .map((r) => ({ sid: r.sid, sent: r.sentAt !== null, claimed: r.claimedUntil })),
        )
        .toEqual([{ sid: someone.sid, sent: true, claimed: null }])
      expect(await runLogoutDeliveries(ctx)).toBe(0)
      expect(mine()).toHaveLength(1)
      await expectLogoutToken(mine()[0]?.logoutToken as string, someone.id, someone.sid)

      // The revoked browser is signed out; the other is still signed in, its OIDC session too (SSO, same sid).
      expect(await sessionOf(someone.jar)).toBeNull()
      expect((await sessionOf(jar2))?.id).toBe(second?.id)
      expect((await signIn(server, config, jar2)).claims()?.sid).toBe(sid2)
      expect(mine()).toHaveLength(1)
    })
  }

  it('the receiver down: the sign-out answers at once, the token is retried with backoff and sent after a restart', async () => {
    serverLog.allowWarning(/^Back-channel logout to client/)
    const dataDir = server.dataDir
    const before = receiver.received.length
    const someone = await person()
    receiver.down = true
    await signOutOf(server, someone.jar)
    const ctx = server.gatehouse.ctx
    const failed = async () => (await listLogoutDeliveries(ctx)).find((r) => r.sid === someone.sid && r.lastError !== null)
    const deadline = Date.now() + 10_000
    while (!(await failed()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    const row = await failed()
    expect(row?.attempts).toBe(1)
    expect(row?.sentAt).toBeNull()
    expect(row?.lastError).toMatch(/503/)
    expect(row?.nextAttemptAt.getTime()).toBe(server.clock.now() + 10_000)
    expect(receiver.received).toHaveLength(before)

    // A restart on the same data: the stored queue survives; the receiver is back; 10 s later on the clock it is sent.
    const at = server.clock.now()
    await server.gatehouse.close()
    receiver.down = false
    const clock = new TestClock(at + 5_000)
    server = await startTestServer({ config: { oidcProvider: { enabled: true } }, dataDir, clock, keepData: false })
    // Not due yet (5 of the 10 s): a delivery run, as the background poll makes, sends nothing.
    expect(await runLogoutDeliveries(server.gatehouse.ctx)).toBe(0)
    expect(receiver.received).toHaveLength(before)
    clock.advanceSeconds(6)
    const received = await receiver.waitFor(before + 1)
    expect(received).toHaveLength(before + 1)
    await expectLogoutToken(received[before]?.logoutToken as string, someone.id, someone.sid)
    const sent = (await listLogoutDeliveries(server.gatehouse.ctx)).find((r) => r.sid === someone.sid)
    expect(sent?.attempts).toBe(2)
    expect(sent?.sentAt).toBeInstanceOf(Date)
  })
})

describe('deliveries isolated per RP', () => {
  it('a dead RP with 400 notices queued beside a healthy one: the healthy notice arrives within one timeout; the dead one is tried once per retry, marked failing, given up after maxRetryAge', async () => {
    serverLog.allowWarning(/^Back-channel logout to client/)
    await deadBesideHealthy(server)
  })
})

describe('back-channel logout to self-registered clients', () => {
  it('a loopback, private or local-network URI is refused at registration with the reason, unless its host is in registration.allowedHosts', async () => {
    const own = await startTestServer({ config: { oidcProvider: { enabled: true, registration: { enabled: true } } } })
    try {
      const { token } = await createRegistrationToken(own.gatehouse.ctx, {}, { via: 'cli' })
      for (const uri of [
        'http://127.0.0.1:9/logout',
        'https://127.0.0.1/logout',
        'https://192.168.1.20/logout',
        'https://10.1.2.3/logout',
        'https://[::1]/logout',
        'https://[fd00::5]/logout',
        'https://localhost/logout',
        'https://nas.lan/logout',
        'https://nas/logout',
      ]) {
        const res = await fetch(`${own.base}/oauth2/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ redirect_uris: [SECURE_CALLBACK], backchannel_logout_uri: uri }),
        })
        expect(res.status).toBe(400)
        const host = new URL(uri).hostname.replace(/^\[|\]$/g, '')
        expect(await res.json()).toEqual({
          error: 'invalid_client_metadata',
          error_description: `backchannel_logout_uri: ${host} is a loopback, private or local-network address, which back-channel logout reaches for a self-registered client only when the administrator lists it in oidcProvider.registration.allowedHosts`,
        })
      }
      const publicHost = await fetch(`${own.base}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ redirect_uris: [SECURE_CALLBACK], backchannel_logout_uri: 'https://rp.example.test/logout' }),
      })
      expect(publicHost.status).toBe(201)
    } finally {
      await own.close()
    }
  })

  it('delivered to an allowed host; the host taken off allowedHosts later: oidc-provider’s guard refuses it and the client shows as failing', async () => {
    serverLog.allowWarning(/^Back-channel logout to client/)
    const own = await startTestServer({ config: { oidcProvider: { enabled: true, registration: { enabled: true } } } })
    const target = await startReceiver()
    try {
      const ctx = own.gatehouse.ctx
      own.gatehouse.config.update({ oidcProvider: { registration: { allowedHosts: ['127.0.0.1'] } } })
      const { token } = await createRegistrationToken(ctx, {}, { via: 'cli' })
      const registered = await oidc.dynamicClientRegistration(
        new URL(own.base),
        { redirect_uris: [SECURE_CALLBACK], backchannel_logout_uri: target.url },
        undefined,
        { initialAccessToken: token, ...insecure },
      )
      const meta = registered.clientMetadata()
      const rp = await discover(own, meta.client_id, meta.client_secret as string)
      const signedUp = await verifiedPerson(own)
      const sids: string[] = []
      for (let i = 0; i < 2; i++) {
        const jar = await signedInJar(own, signedUp)
        const tokens = await signIn(own, rp, jar, { redirectUri: SECURE_CALLBACK })
        sids.push(tokens.claims()?.sid as string)
        await signOutOf(own, jar)
        if (i === 0) {
          const received = await target.waitFor(1)
          expect(received.map((r) => decodeJwt(r.logoutToken).sid)).toEqual([sids[0]])
          own.gatehouse.config.update({ oidcProvider: { registration: { allowedHosts: ['other.example.test'] } } })
        } else {
          const deadline = Date.now() + 10_000
          let row = (await listLogoutDeliveries(ctx)).find((r) => r.sid === sids[1])
          while (!row?.lastError && Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 20))
            row = (await listLogoutDeliveries(ctx)).find((r) => r.sid === sids[1])
          }
          expect(row?.lastError).toMatch(/special-use IP/)
          expect(target.received).toHaveLength(1)
          const view = await getClient(ctx, meta.client_id)
          expect(view.backchannelFailingSince).toBe(own.clock.now())
          expect(view.backchannelLastError).toMatch(/special-use IP/)
        }
      }
    } finally {
      await target.close()
      await own.close()
    }
  })
})
