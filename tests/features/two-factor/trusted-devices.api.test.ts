import { and, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, mailOutbox, verification } from '../../../server/db/schema.js'
import { HttpClient, signUp } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Gatehouse's trusted-browser list (the hosted Two-factor page's): `GET /two-factor/trusted-devices`,
 * `POST /two-factor/forget-trusted-device` and `POST /two-factor/forget-trusted-devices`. Each needs
 * a session and touches only the person's own browsers; a forgotten browser is challenged again at
 * its next sign-in although it still holds its trust_device cookie; each forget is audited.
 */

let server: TestServer
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0'
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
const TRUST = 'better-auth.trust_device'

beforeAll(async () => {
  server = await startTestServer({ config: { twoFactor: { enabled: true } } })
})
afterAll(() => server.close())

interface Device {
  id: string
  userAgent: string | null
  trustedAt: string
  lastUsedAt: string
  expiresAt: string
  current: boolean
}

/** A person with two-factor by mailed codes (POST /two-factor/enable, method otp); `client` holds their session. */
async function withEmailCodes() {
  const who = await signUp(server.base)
  const enabled = await who.client.post('/two-factor/enable', { password: who.password, method: 'otp' })
  expect(enabled.status).toBe(200)
  expect(enabled.body).toEqual({ method: 'otp' })
  return who
}

const seenMails = new Set<string>()

/** The code of the one code mail to `email` not read before (the outbox; the test clock stands still, so not by time). */
async function newCode(email: string): Promise<string> {
  const mails = await server.gatehouse.ctx.db
    .select()
    .from(mailOutbox)
    .where(and(eq(mailOutbox.to, email), eq(mailOutbox.kind, 'two-factor-otp')))
  const fresh = mails.filter((m) => !seenMails.has(m.id))
  expect(fresh).toHaveLength(1)
  const mail = fresh[0] as (typeof mails)[number]
  seenMails.add(mail.id)
  return /verification code is (\d{6})/.exec(mail.text)?.[1] as string
}

/** The trust record a trust_device cookie names (its value is `hmac!trust-device-…`, signed). */
const trustIdOf = (cookie: string | undefined): string => /trust-device-[A-Za-z0-9]+/.exec(decodeURIComponent(cookie ?? ''))?.[0] as string

/** Whether the details record of a trust record is still there. */
const detailsKept = async (trustId: string): Promise<boolean> =>
  (
    await server.gatehouse.ctx.db
      .select()
      .from(verification)
      .where(eq(verification.identifier, `2fa-trusted-${trustId}`))
  ).length > 0

/** A browser (its own jar and user agent) that signs in; with `trust`, it passes the mailed code and is trusted. */
async function signInFrom(
  who: { email: string; password: string },
  userAgent: string,
  browser = new HttpClient(server.base, { headers: { 'user-agent': userAgent } }),
) {
  browser.jar.cookies.delete('better-auth.session_token')
  const first = await browser.post<{ twoFactorRedirect?: boolean; twoFactorMethods?: string[]; token?: string }>('/sign-in/email', {
    email: who.email,
    password: who.password,
  })
  expect(first.status).toBe(200)
  return { browser, challenged: first.body.twoFactorRedirect === true, body: first.body }
}

async function trustedBrowser(who: { email: string; password: string }, userAgent: string): Promise<HttpClient> {
  const { browser, challenged, body } = await signInFrom(who, userAgent)
  expect(challenged).toBe(true)
  expect(body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ['otp'] })
  expect((await browser.post('/two-factor/send-otp', {})).status).toBe(200)
  const verified = await browser.post('/two-factor/verify-otp', { code: await newCode(who.email), trustDevice: true })
  expect(verified.status).toBe(200)
  expect(browser.jar.get(TRUST)).toBeTruthy()
  return browser
}

const list = async (client: HttpClient) => {
  const answer = await client.get<{ devices: Device[] }>('/two-factor/trusted-devices')
  expect(answer.status).toBe(200)
  expect(answer.headers.get('cache-control')).toBe('no-store')
  return answer.body.devices
}

describe('trusted browsers: listed and forgotten', () => {
  it('lists each trusted browser with its user agent, since when and until when, and which one asks', async () => {
    const ada = await withEmailCodes()
    expect(await list(ada.client)).toEqual([])
    const since = server.clock.now()
    const firefox = await trustedBrowser(ada, FIREFOX)
    server.clock.advanceSeconds(60)
    await trustedBrowser(ada, IPHONE)

    // Asked from the Firefox browser (its session and trust cookie): newest first, Firefox marked current.
    const seen = await list(firefox)
    expect(seen).toHaveLength(2)
    expect(seen.map((d) => [d.userAgent, d.current])).toEqual([
      [IPHONE, false],
      [FIREFOX, true],
    ])
    const ff = seen[1] as Device
    expect(ff.id).toMatch(/^[A-Za-z0-9]+$/)
    // The id is the record's row id, not the trust identifier the cookie carries.
    expect(firefox.jar.get(TRUST)).not.toContain(ff.id)
    expect(Date.parse(ff.trustedAt)).toBe(since)
    expect(Date.parse(ff.expiresAt)).toBe(since + 2_592_000_000)

    // A trusted sign-in renews the trust (new record, new expiry) but keeps since when it is trusted.
    server.clock.advanceSeconds(3600)
    const again = await signInFrom(ada, FIREFOX, firefox)
    expect(again.challenged).toBe(false)
    const renewed = (await list(firefox)).find((d) => d.userAgent === FIREFOX) as Device
    expect(renewed.id).not.toBe(ff.id)
    expect(renewed.current).toBe(true)
    expect(Date.parse(renewed.trustedAt)).toBe(since)
    expect(Date.parse(renewed.lastUsedAt)).toBe(server.clock.now())
    expect(Date.parse(renewed.expiresAt)).toBe(server.clock.now() + 2_592_000_000)
  })

  it('forgetting one browser makes its next sign-in ask for a code; the others stay trusted', async () => {
    const bea = await withEmailCodes()
    const firefox = await trustedBrowser(bea, FIREFOX)
    const iphone = await trustedBrowser(bea, IPHONE)
    const phone = (await list(bea.client)).find((d) => d.userAgent === IPHONE) as Device

    // Forgotten from another session (the account page on a laptop): the phone keeps its cookie.
    const forgot = await bea.client.post('/two-factor/forget-trusted-device', { id: phone.id })
    expect(forgot.status).toBe(200)
    expect(forgot.body).toEqual({ status: true })
    expect(forgot.cookies.some((c) => c.startsWith(`${TRUST}=`))).toBe(false)
    expect((await list(bea.client)).map((d) => d.userAgent)).toEqual([FIREFOX])
    const phoneTrust = trustIdOf(iphone.jar.get(TRUST))
    expect(phoneTrust).toMatch(/^trust-device-/)
    expect(await detailsKept(trustIdOf(firefox.jar.get(TRUST)))).toBe(true)
    const phoneAgain = await signInFrom(bea, IPHONE, iphone)
    expect(phoneAgain.body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ['otp'] })
    expect((await signInFrom(bea, FIREFOX, firefox)).challenged).toBe(false)

    // Gone with its details record; forgetting it twice is a 404.
    expect(await detailsKept(phoneTrust)).toBe(false)
    const twice = await bea.client.post('/two-factor/forget-trusted-device', { id: phone.id })
    expect(twice.status).toBe(404)
    expect(twice.body).toMatchObject({ code: 'TRUSTED_DEVICE_NOT_FOUND', message: 'Trusted browser not found' })

    const audited = await server.gatehouse.ctx.db
      .select()
      .from(auditEvent)
      .where(and(eq(auditEvent.type, 'two-factor.trusted-device-forgotten'), eq(auditEvent.actorUserId, bea.user.id)))
    expect(audited).toHaveLength(1)
    expect(audited[0]).toMatchObject({ outcome: 'success', detail: { count: 1 } })
  })

  it("forgetting this browser's own trust also clears its cookie", async () => {
    const cleo = await withEmailCodes()
    const firefox = await trustedBrowser(cleo, FIREFOX)
    const mine = (await list(firefox)).find((d) => d.current) as Device
    const forgot = await firefox.post('/two-factor/forget-trusted-device', { id: mine.id })
    expect(forgot.status).toBe(200)
    expect(forgot.cookies.find((c) => c.startsWith(`${TRUST}=`))).toMatch(/Max-Age=0/)
    expect(firefox.jar.get(TRUST)).toBeUndefined()
    expect((await signInFrom(cleo, FIREFOX, firefox)).challenged).toBe(true)
  })

  it('forgets every trusted browser at once; each is then asked for a code', async () => {
    const dan = await withEmailCodes()
    const firefox = await trustedBrowser(dan, FIREFOX)
    const iphone = await trustedBrowser(dan, IPHONE)
    // Asked from the Firefox browser: its own cookie is cleared; the phone keeps its (now void) one.
    const forgot = await firefox.post('/two-factor/forget-trusted-devices', {})
    expect(forgot.status).toBe(200)
    expect(forgot.body).toEqual({ status: true, forgotten: 2 })
    expect(firefox.jar.get(TRUST)).toBeUndefined()
    expect(iphone.jar.get(TRUST)).toBeTruthy()
    expect(await list(dan.client)).toEqual([])
    expect((await signInFrom(dan, FIREFOX, firefox)).challenged).toBe(true)
    expect((await signInFrom(dan, IPHONE, iphone)).challenged).toBe(true)
    const nothing = await dan.client.post('/two-factor/forget-trusted-devices')
    expect(nothing.body).toEqual({ status: true, forgotten: 0 })
    const audited = await server.gatehouse.ctx.db
      .select({ detail: auditEvent.detail })
      .from(auditEvent)
      .where(and(eq(auditEvent.type, 'two-factor.trusted-device-forgotten'), eq(auditEvent.actorUserId, dan.user.id)))
      .orderBy(auditEvent.id)
    expect(audited.map((a) => a.detail)).toEqual([
      { count: 2, all: true },
      { count: 0, all: true },
    ])
  })

  it("another person's browser is neither listed nor forgotten; each route needs a session and an id", async () => {
    const eve = await withEmailCodes()
    const fay = await withEmailCodes()
    const faysPhone = await trustedBrowser(fay, IPHONE)
    const theirs = (await list(fay.client))[0] as Device
    expect(await list(eve.client)).toEqual([])

    const refused = await eve.client.post('/two-factor/forget-trusted-device', { id: theirs.id })
    expect(refused.status).toBe(404)
    expect(refused.body).toMatchObject({ code: 'TRUSTED_DEVICE_NOT_FOUND' })
    expect((await eve.client.post('/two-factor/forget-trusted-devices', {})).body).toEqual({ status: true, forgotten: 0 })
    expect((await list(fay.client)).map((d) => d.id)).toEqual([theirs.id])
    expect((await signInFrom(fay, IPHONE, faysPhone)).challenged).toBe(false)

    const anonymous = new HttpClient(server.base)
    expect((await anonymous.get('/two-factor/trusted-devices')).status).toBe(401)
    expect((await anonymous.post('/two-factor/forget-trusted-device', { id: theirs.id })).status).toBe(401)
    expect((await anonymous.post('/two-factor/forget-trusted-devices', {})).status).toBe(401)
    const noId = await eve.client.post('/two-factor/forget-trusted-device', {})
    expect(noId.status).toBe(400)
  })

  it('turning two-factor off forgets the browsers and their details', async () => {
    const gus = await withEmailCodes()
    const firefox = await trustedBrowser(gus, FIREFOX)
    const trustId = trustIdOf(firefox.jar.get(TRUST))
    expect(await detailsKept(trustId)).toBe(true)
    expect(await list(gus.client)).toHaveLength(1)
    expect((await gus.client.post('/two-factor/disable', { password: gus.password })).status).toBe(200)
    expect(await list(gus.client)).toEqual([])
    expect(await detailsKept(trustId)).toBe(false)
  })
})
