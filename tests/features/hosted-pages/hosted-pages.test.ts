import { createServer, type Server } from 'node:http'
import { rmSync } from 'node:fs'
import { type TOTP, URI } from 'otpauth'
import type { Browser, BrowserContext, Page, Route } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HOSTED_WINDOW, launchBrowser, newPage, type NewPageOptions } from '../../helpers/browser.js'
import { FakeOidc } from '../../helpers/fake-oidc.js'
import { HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { createPanelService } from '../../../server/panel/service.js'
import { silentLogger, startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { type SmtpSink, startSmtpSink } from '../../helpers/smtp.js'
import { buildHostedPages } from '../../helpers/hosted.js'
import { axe } from '../../helpers/axe.js'

/**
 * Gatehouse's hosted end-user pages (issue 17) in real Chromium against the real server on
 * loopback: the pages built by vite.hosted.config.ts exactly as `npm run build` does, the real
 * SMTP sink for the mailed links, otpauth for a real TOTP code, axe-core for WCAG 2 A/AA.
 *
 * The consent and sign-out pages meet the OIDC feature (branch r3-oidc) only at its URLs: here a
 * STAND-IN for it (`fakeOidcInteraction`, routed inside the browser with Playwright) answers
 * `GET/POST {base}/oidc/interaction/<uid>[/consent|/abort]` and the end-session confirm form
 * exactly as the contract (docs of issue 17, prompts/oidc-contract.md) describes.
 */

const PASSWORD = 'correct horse battery'
const COLOR = '#6b2fa0'
// A 1×1 PNG, served from a second loopback origin as the configured logo.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')

let assets = ''
let server: TestServer
let sink: SmtpSink
let browser: Browser
let logoServer: Server
let logoURL = ''
/** Console messages and CSP violations of every page opened by `newPage`. */
const cspViolations: string[] = []

beforeAll(async () => {
  ;[assets, browser, sink] = await Promise.all([buildHostedPages(), launchBrowser(), startSmtpSink()])
  process.env.GATEHOUSE_HOSTED_ASSETS = assets
  logoServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png' })
    res.end(PNG)
  })
  await new Promise<void>((r) => logoServer.listen(0, '127.0.0.1', () => r()))
  const address = logoServer.address()
  logoURL = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/logo.png`
  server = await startTestServer({
    // Real time: the browser drops cookies whose expiry (from the server's clock) lies in the past.
    clock: new TestClock(Date.now()),
    config: {
      twoFactor: { enabled: true },
      emailVerification: { sendOnSignUp: true },
      mail: { smtp: { url: sink.url } },
    },
  })
  // The stored layer, as the panel's Settings edit it (the test's config above is an override layer).
  server.gatehouse.config.update({ appName: 'Acme Sign-In', hostedPages: { color: COLOR, logo: logoURL } })
}, 120_000)

afterAll(async () => {
  await server?.close()
  await browser?.close()
  await sink?.close()
  await new Promise<void>((r) => (logoServer ? logoServer.close(() => r()) : r()))
  delete process.env.GATEHOUSE_HOSTED_ASSETS
  if (assets) rmSync(assets, { recursive: true, force: true })
})

/** Each page's CSP violations and uncaught errors go to cspViolations (none may occur). */
const PAGE: NewPageOptions = { cspViolations, errors: cspViolations }

const ui = (page: string, params: Record<string, string> = {}) => {
  const url = new URL(`${server.base}/ui/${page}`)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.href
}

/** The first http(s) link of a mail's text. */
const linkIn = (text: string): string => {
  const found = /https?:\/\/\S+/.exec(text)?.[0]
  if (!found) throw new Error(`no link in mail: ${text}`)
  return found.replace(/[)>.,]+$/, '')
}

async function signInThroughPage(page: Page, identifier: string, password: string): Promise<void> {
  await page.getByLabel(/^Email or username/).fill(identifier)
  await page.getByLabel(/^Password/).fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

/** The better-auth session cookie of the browser context, if any. */
const sessionCookie = async (context: BrowserContext) => (await context.cookies()).find((c) => c.name === 'better-auth.session_token')

describe('hosted pages', () => {
  it('serves every page under the base path with a strict CSP, the public config and the assets', async () => {
    for (const name of ['sign-in', 'consent', 'sign-out', 'error', 'sign-up', 'forgot-password', 'reset-password', 'verify-email']) {
      const res = await fetch(ui(name))
      expect(res.status, name).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
      const csp = res.headers.get('content-security-policy') ?? ''
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1]
      expect(nonce, name).toBeTruthy()
      expect(csp).toContain("script-src 'self';")
      expect(csp).not.toContain('unsafe-inline')
      expect(csp).not.toContain('unsafe-eval')
      expect(csp).toContain(`img-src 'self' data: ${new URL(logoURL).origin}`)
      expect(csp).toContain("frame-ancestors 'none'")
      // The sign-out page posts to the OIDC end-session form, which redirects to the application's URI.
      if (name === 'sign-out') expect(csp).not.toContain('form-action')
      else expect(csp).toContain("form-action 'self'")
      expect(res.headers.get('x-frame-options')).toBe('DENY')
      const html = await res.text()
      // No inline script; the nonce reaches Mantine through the meta tag; the title is the app's name.
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
      expect(html).toContain(`<meta name="gatehouse-style-nonce" content="${nonce}"`)
      // The pre-paint page colour carries the same nonce (else the CSP drops it and dark mode flashes white).
      expect(html).toContain(`<style nonce="${nonce}">`)
      expect(html).toContain('<title>Acme Sign-In</title>')
    }
    // A fresh nonce per response.
    const [a, b] = await Promise.all([fetch(ui('sign-in')), fetch(ui('sign-in'))])
    expect(a.headers.get('content-security-policy')).not.toBe(b.headers.get('content-security-policy'))

    const unknown = await fetch(ui('nope'))
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ code: 'NOT_FOUND', message: 'Not Found' })
    const traversal = await fetch(`${server.base}/ui/assets/..%2Findex.html`)
    expect(traversal.status).toBe(404)

    // Switched off: every /ui path answers the JSON 404 as if absent.
    server.gatehouse.config.update({ hostedPages: { enabled: false } })
    for (const path of ['/ui/sign-in', '/ui/api/config', '/ui']) {
      const off = await fetch(`${server.base}${path}`)
      expect([path, off.status, await off.json()]).toEqual([path, 404, { code: 'NOT_FOUND', message: 'Not Found' }])
    }
    server.gatehouse.config.update({ hostedPages: { enabled: null } })

    const config = await fetch(`${server.base}/ui/api/config`)
    expect(config.status).toBe(200)
    expect(await config.json()).toEqual({
      appName: 'Acme Sign-In',
      logo: logoURL,
      color: COLOR,
      emailAndPassword: true,
      signUp: true,
      username: true,
      passkey: false,
      twoFactor: true,
      forgotPassword: true,
      magicLink: false,
      emailOTP: false,
      appPasswordsKeptOnPasswordChange: false,
      changeEmail: false,
      deleteUser: false,
      socialProviders: [],
    })
  })

  it("paints the page in the visitor's scheme before its script runs (no white flash in dark mode)", async () => {
    for (const [scheme, colour] of [
      ['dark', 'rgb(31, 31, 31)'],
      ['light', 'rgb(248, 249, 250)'],
    ] as const) {
      const { context, page } = await newPage(browser, { ...PAGE, window: { ...HOSTED_WINDOW, colorScheme: scheme } })
      // The script never arrives: what shows is what the HTML alone paints.
      await page.route(/\/ui\/assets\/.*\.js$/, (route) => route.abort())
      await page.goto(ui('sign-in'))
      expect(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor), scheme).toBe(colour)
      await context.close()
    }
    expect(cspViolations).toEqual([])
  }, 30_000)

  it('signs in with a password and goes to returnTo with the session cookie; a wrong password is shown beside the field', async () => {
    const user = await signUp(server.base, { password: PASSWORD, name: 'Pat Page' })
    const { context, page } = await newPage(browser, PAGE)
    const returnTo = `${server.base}/get-session`
    await page.goto(ui('sign-in', { returnTo }))
    await page.getByRole('heading', { level: 1, name: 'Sign in to Acme Sign-In' }).waitFor()
    expect(await axe(page)).toEqual([])

    // Keyboard only: the first field has focus, Tab moves on, Enter submits.
    await page.keyboard.type(user.email)
    await page.keyboard.press('Tab')
    await page.keyboard.type('wrong password')
    await page.keyboard.press('Enter')
    const password = page.getByLabel(/^Password/)
    // The sign-in (a password hash) may take more than poll's default second on a loaded machine.
    await expect.poll(() => password.getAttribute('aria-invalid'), { timeout: 20_000 }).toBe('true')
    // Announced: focus moves to the refused field (issue 49 §12), not to the page body.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('name')), { timeout: 20_000 }).toBe('password')
    const describedBy = (await password.getAttribute('aria-describedby')) ?? ''
    const errorId = describedBy.split(' ').find((id) => id.includes('error'))
    expect(errorId).toBeTruthy()
    expect(await page.locator(`[id="${errorId}"]`).textContent()).toBe('Invalid email or password')
    expect(await page.getByLabel(/^Email or username/).getAttribute('aria-invalid')).not.toBe('true')
    expect(await sessionCookie(context)).toBeUndefined()
    expect(await axe(page)).toEqual([])

    await password.fill(PASSWORD)
    await password.press('Enter')
    await page.waitForURL(returnTo)
    const cookie = await sessionCookie(context)
    expect(cookie?.httpOnly).toBe(true)
    const session = JSON.parse((await page.locator('pre').first().textContent()) ?? 'null') as { user: { email: string } }
    expect(session.user.email).toBe(user.email)
    await context.close()
  })

  it('signs in with a username (no @: /sign-in/username)', async () => {
    const username = `page_${Date.now().toString(36)}`
    await signUp(server.base, { password: PASSWORD, username })
    const { context, page } = await newPage(browser, PAGE)
    await page.goto(ui('sign-in'))
    const posted = page.waitForRequest((r) => r.url() === `${server.base}/sign-in/username`)
    await signInThroughPage(page, username, PASSWORD)
    expect((await posted).postDataJSON()).toEqual({ username, password: PASSWORD, rememberMe: true })
    await page.getByTestId('signed-in').waitFor()
    expect(await sessionCookie(context)).toBeDefined()
    await context.close()
  })

  it('works under another base path (pages, assets, API calls and returnTo follow it)', async () => {
    const other = await startTestServer({ clock: new TestClock(Date.now()), config: { basePath: '/sso' } })
    try {
      expect(other.base).toBe(`${other.origin}/sso`)
      const user = await signUp(other.base, { password: PASSWORD })
      const { context, page } = await newPage(browser, PAGE)
      // /api/auth on the same origin is outside this server's base path: refused.
      await page.goto(`${other.base}/ui/sign-in?returnTo=${encodeURIComponent(`${other.origin}/api/auth/get-session`)}`)
      await signInThroughPage(page, user.email, PASSWORD)
      await page.getByTestId('signed-in').waitFor()
      await context.clearCookies()
      const returnTo = `${other.base}/get-session`
      await page.goto(`${other.base}/ui/sign-in?returnTo=${encodeURIComponent(returnTo)}`)
      await signInThroughPage(page, user.email, PASSWORD)
      await page.waitForURL(returnTo)
      expect(JSON.parse((await page.locator('pre').first().textContent()) ?? 'null').user.email).toBe(user.email)
      await context.close()
    } finally {
      await other.close()
    }
  })

  it('refuses every returnTo that is not this origin under the base path (open redirect)', async () => {
    const user = await signUp(server.base, { password: PASSWORD })
    const outside = [
      'https://evil.example/steal',
      '//evil.example/steal',
      '/\\evil.example/steal',
      `${server.origin}/not-under-base`,
      `${server.base}x/steal`,
      'javascript:alert(document.domain)',
    ]
    const { context, page } = await newPage(browser, PAGE)
    for (const returnTo of outside) {
      await context.clearCookies()
      await page.goto(ui('sign-in', { returnTo }))
      await signInThroughPage(page, user.email, PASSWORD)
      await page.getByTestId('signed-in').waitFor()
      expect(page.url(), returnTo).toBe(ui('sign-in', { returnTo }))
      expect(await sessionCookie(context), returnTo).toBeDefined()
    }
    await context.close()
  })

  it('asks for the second factor when sign-in answers twoFactorRedirect: a real TOTP code, a mailed code, a backup code', async () => {
    const user = await signUp(server.base, { password: PASSWORD, name: 'Mfa Page' })
    const enable = await user.client.post<{ totpURI: string; backupCodes: string[] }>('/two-factor/enable', { password: PASSWORD })
    expect(enable.status).toBe(200)
    const totp = URI.parse(enable.body.totpURI) as TOTP
    const enrol = await user.client.post('/two-factor/verify-totp', { code: totp.generate({ timestamp: server.clock.now() }) })
    expect(enrol.status).toBe(200)
    // The next code must come from a later time step (a code is accepted once).
    server.clock.advanceSeconds(30)

    const { context, page } = await newPage(browser, PAGE)
    const returnTo = `${server.base}/get-session`
    await page.goto(ui('sign-in', { returnTo }))
    await signInThroughPage(page, user.email, PASSWORD)
    await page.getByRole('heading', { level: 1, name: 'Two-step verification' }).waitFor()
    expect(await sessionCookie(context)).toBeUndefined()
    expect(await axe(page)).toEqual([])

    const code = page.getByLabel(/^Verification code/)
    await code.fill('000000')
    await page.getByRole('button', { name: 'Verify' }).click()
    await expect.poll(() => code.getAttribute('aria-invalid')).toBe('true')
    await page.getByText('Invalid code').waitFor()
    expect(await axe(page)).toEqual([])

    await code.fill(totp.generate({ timestamp: server.clock.now() }))
    await page.getByRole('button', { name: 'Verify' }).click()
    await page.waitForURL(returnTo)
    expect(JSON.parse((await page.locator('pre').first().textContent()) ?? 'null').user.email).toBe(user.email)

    // The other two methods of the step: a code by email (through the SMTP sink) and a backup code.
    await context.clearCookies()
    await page.goto(ui('sign-in'))
    await signInThroughPage(page, user.email, PASSWORD)
    await page.getByText('Code by email').click()
    await page.getByRole('button', { name: 'Send a code' }).click()
    const mail = await sink.waitFor(user.email, (m) => /verification code/.test(m.subject))
    const mailed = /is (\d{6})\./.exec(mail.text)?.[1] ?? ''
    expect(mailed).toMatch(/^\d{6}$/)
    await page.getByLabel(/^Verification code/).fill(mailed)
    await page.getByRole('button', { name: 'Verify' }).click()
    await page.getByTestId('signed-in').waitFor()

    await context.clearCookies()
    await page.goto(ui('sign-in'))
    await signInThroughPage(page, user.email, PASSWORD)
    await page.getByText('Backup code', { exact: true }).click()
    await page.getByRole('textbox', { name: /^Backup code/ }).fill(enable.body.backupCodes[0] ?? '')
    await page.getByRole('button', { name: 'Verify' }).click()
    await page.getByTestId('signed-in').waitFor()
    expect(await sessionCookie(context)).toBeDefined()
    await context.close()
  })

  it('signs in with a passkey (virtual authenticator) through the passkey feature', async () => {
    // WebAuthn needs a host name, not an IP: the same server reached as http://localhost:PORT.
    const local = `http://localhost:${new URL(server.origin).port}`
    server.gatehouse.config.update({ trustedOrigins: [local], passkey: { enabled: true, rpID: 'localhost', origin: local } })
    try {
      const user = await signUp(server.base, { password: PASSWORD })
      const { context, page } = await newPage(browser, PAGE)
      const cdp = await context.newCDPSession(page)
      await cdp.send('WebAuthn.enable')
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      })
      // Registration (the panel's or an app's job) done here with the raw WebAuthn API and the user's fresh session.
      await context.addCookies([
        { name: 'better-auth.session_token', value: user.client.jar.get('better-auth.session_token') ?? '', url: local },
      ])
      await page.goto(`${local}/api/auth/ui/sign-in`)
      const registered = await page.evaluate(async () => {
        const b64u = (buf: ArrayBuffer) =>
          btoa(String.fromCharCode(...new Uint8Array(buf)))
            .replace(/\+/g, '-')
            .replace(/\//g, '_')
            .replace(/=+$/, '')
        const bytes = (s: string) =>
          Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)), (c) => c.charCodeAt(0))
        const options = await (await fetch('/api/auth/passkey/generate-register-options')).json()
        const credential = (await navigator.credentials.create({
          publicKey: {
            ...options,
            challenge: bytes(options.challenge),
            user: { ...options.user, id: bytes(options.user.id) },
            excludeCredentials: [],
          },
        })) as PublicKeyCredential
        const r = credential.response as AuthenticatorAttestationResponse
        const response = {
          id: credential.id,
          rawId: b64u(credential.rawId),
          type: credential.type,
          clientExtensionResults: {},
          response: { clientDataJSON: b64u(r.clientDataJSON), attestationObject: b64u(r.attestationObject), transports: r.getTransports() },
        }
        const answer = await fetch('/api/auth/passkey/verify-registration', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ response }),
        })
        return answer.status
      })
      expect(registered).toBe(200)

      await context.clearCookies()
      const returnTo = `${local}/api/auth/get-session`
      await page.goto(`${local}/api/auth/ui/sign-in?returnTo=${encodeURIComponent(returnTo)}`)
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
      await page.waitForURL(returnTo)
      expect(JSON.parse((await page.locator('pre').first().textContent()) ?? 'null').user.email).toBe(user.email)
      await context.close()
    } finally {
      server.gatehouse.config.update({ trustedOrigins: null, passkey: null })
    }
  })

  it('shows a button per enabled social provider, which starts /sign-in/social, back through the sign-in page to returnTo', async () => {
    const provider = new URL(logoURL).origin
    server.gatehouse.config.update({
      socialProviders: {
        github: { clientId: 'hosted-client', clientSecret: 'hosted-secret', endpoints: { authorization: `${provider}/authorize` } },
      },
    })
    try {
      const config = (await (await fetch(`${server.base}/ui/api/config`)).json()) as { socialProviders: unknown }
      expect(config.socialProviders).toEqual([{ id: 'github', name: 'GitHub' }])
      const { context, page } = await newPage(browser, PAGE)
      const returnTo = `${server.base}/get-session`
      await page.goto(ui('sign-in', { returnTo }))
      expect(await axe(page)).toEqual([])
      const started = page.waitForRequest((r) => r.url() === `${server.base}/sign-in/social`)
      await page.getByRole('button', { name: 'Continue with GitHub' }).click()
      expect((await started).postDataJSON()).toEqual({
        provider: 'github',
        // Back to the sign-in page, which goes on to returnTo (through the enrolment step when due).
        callbackURL: ui('sign-in', { done: '1', returnTo }),
        errorCallbackURL: ui('error'),
      })
      await page.waitForURL((url) => url.origin === provider && url.pathname === '/authorize')
      const authorize = new URL(page.url())
      expect(authorize.searchParams.get('client_id')).toBe('hosted-client')
      expect(authorize.searchParams.get('redirect_uri')).toBe(`${server.base}/callback/github`)
      expect(authorize.searchParams.get('state')).toBeTruthy()
      await context.close()
    } finally {
      server.gatehouse.config.update({ socialProviders: null })
    }
  })

  it('lists a generic OAuth provider beside the social ones; its button signs in through the provider and back to returnTo', async () => {
    const op = await new FakeOidc('hosted-generic', 'hosted-generic-secret').start()
    op.user = { sub: 'hosted-generic-1', email: uniqueEmail('hosted-generic'), email_verified: true, name: 'Gene Rick' }
    server.gatehouse.config.update({
      genericOAuth: {
        config: [
          {
            providerId: 'corp-sso',
            name: 'Corp SSO',
            discoveryUrl: op.discoveryUrl,
            clientId: 'hosted-generic',
            clientSecret: 'hosted-generic-secret',
          },
        ],
      },
    })
    try {
      const config = (await (await fetch(`${server.base}/ui/api/config`)).json()) as { socialProviders: unknown }
      expect(config.socialProviders).toEqual([{ id: 'corp-sso', name: 'Corp SSO' }])
      const { context, page } = await newPage(browser, PAGE)
      const returnTo = `${server.base}/get-session`
      await page.goto(ui('sign-in', { returnTo }))
      expect(await axe(page)).toEqual([])
      const started = page.waitForRequest((r) => r.url() === `${server.base}/sign-in/social`)
      await page.getByRole('button', { name: 'Continue with Corp SSO' }).click()
      expect((await started).postDataJSON()).toEqual({
        provider: 'corp-sso',
        // Back to the sign-in page, which goes on to returnTo (through the enrolment step when due).
        callbackURL: ui('sign-in', { done: '1', returnTo }),
        errorCallbackURL: ui('error'),
      })
      // The fake provider signs the user in at once and sends the browser back through /callback/corp-sso.
      await page.waitForURL(returnTo)
      expect(JSON.parse((await page.locator('body').textContent()) ?? 'null')).toMatchObject({ user: { email: op.user.email } })
      await context.close()
    } finally {
      server.gatehouse.config.update({ genericOAuth: null })
      await op.close()
    }
  })

  it('signs up, and the verification mail lands on the verify-email page', async () => {
    const { context, page } = await newPage(browser, PAGE)
    const email = uniqueEmail('hosted')
    await page.goto(ui('sign-in'))
    await page.getByRole('link', { name: 'Create an account' }).click()
    await page.getByRole('heading', { level: 1, name: 'Create your account' }).waitFor()
    expect(await axe(page)).toEqual([])
    await page.getByLabel(/^Name/).fill('Sam Signup')
    await page.getByLabel(/^Email/).fill(email)
    await page.getByLabel(/^Password/).fill('short')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.getByText('Password too short').waitFor()
    expect(await page.getByLabel(/^Password/).getAttribute('aria-invalid')).toBe('true')
    await page.getByLabel(/^Password/).fill(PASSWORD)
    await page.getByRole('button', { name: 'Create account' }).click()
    // autoSignIn: the new account has a session and sees the done state.
    await page.getByTestId('signed-in').waitFor()
    expect(await sessionCookie(context)).toBeDefined()

    const mail = await sink.waitFor(email)
    const link = linkIn(mail.text)
    expect(new URL(link).pathname).toBe('/api/auth/verify-email')
    expect(new URL(link).searchParams.get('callbackURL')).toBe(ui('verify-email', { verified: '1' }))
    await page.goto(link)
    await page.waitForURL(ui('verify-email', { verified: '1' }))
    await page.getByTestId('email-verified').waitFor()
    expect(await axe(page)).toEqual([])
    const session = await page.request.get(`${server.base}/get-session`)
    expect(((await session.json()) as { user: { emailVerified: boolean } }).user.emailVerified).toBe(true)

    // A forged link: GET /verify-email redirects back with ?error=invalid_token, which the page explains.
    const forged = new URL(link)
    forged.searchParams.set('token', `${forged.searchParams.get('token')}x`)
    await page.goto(forged.href)
    await page.getByRole('heading', { level: 1, name: 'Email not verified' }).waitFor()
    expect(page.url()).toContain('error=')
    expect(await axe(page)).toEqual([])
    await context.close()
  })

  it('forgot password mails a link to the reset page, which sets the new password', async () => {
    const user = await signUp(server.base, { password: PASSWORD })
    const { context, page } = await newPage(browser, PAGE)
    await page.goto(ui('sign-in'))
    await page.getByRole('link', { name: 'Forgot your password?' }).click()
    await page.getByRole('heading', { level: 1, name: 'Reset your password' }).waitFor()
    expect(await axe(page)).toEqual([])
    await page.getByLabel(/^Email/).fill(user.email)
    await page.getByRole('button', { name: 'Send reset link' }).click()
    await page
      .getByTestId('reset-requested')
      .filter({ hasText: 'If this email exists in our system, check your email for the reset link' })
      .waitFor()

    const mail = await sink.waitFor(user.email, (m) => /reset/i.test(m.subject))
    const link = linkIn(mail.text)
    expect(new URL(link).pathname).toMatch(/^\/api\/auth\/reset-password\/[A-Za-z0-9]+$/)
    await page.goto(link)
    await page.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor()
    expect(new URL(page.url()).pathname).toBe('/api/auth/ui/reset-password')
    expect(new URL(page.url()).searchParams.get('token')).toBeTruthy()
    expect(await axe(page)).toEqual([])
    const fresh = 'a brand new passphrase'
    await page.getByLabel(/^New password/).fill(fresh)
    await page.getByLabel(/^Repeat the new password/).fill('something else')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByText('The two passwords differ').waitFor()
    await page.getByLabel(/^Repeat the new password/).fill(fresh)
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByTestId('password-changed').waitFor()

    const client = new HttpClient(server.base)
    expect((await client.post('/sign-in/email', { email: user.email, password: fresh })).status).toBe(200)
    expect((await client.post('/sign-in/email', { email: user.email, password: PASSWORD })).status).toBe(401)

    // The link again: the token is spent, the page says so.
    await page.goto(link)
    await page.getByRole('heading', { level: 1, name: 'This link does not work' }).waitFor()
    expect(await axe(page)).toEqual([])
    await context.close()
  })

  it('consent: reads the interaction, shows the client and scopes, posts Allow and follows redirectTo (OIDC stand-in)', async () => {
    const user = await signUp(server.base, { password: PASSWORD })
    const { context, page } = await newPage(browser, PAGE)
    await context.addCookies([
      { name: 'better-auth.session_token', value: user.client.jar.get('better-auth.session_token') ?? '', url: server.origin },
    ])
    const fake = await fakeOidcInteraction(page)
    await page.goto(ui('consent', { interaction: 'uid-123' }))
    await page.getByRole('heading', { level: 1, name: 'Allow Grafana?' }).waitFor()
    expect(await page.getByTestId('scopes').textContent()).toContain('Your email address')
    expect(await page.getByRole('img', { name: 'Grafana logo' }).evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1)
    expect(await axe(page)).toEqual([])
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.waitForURL(`${server.base}/ui/error?error=consent_given_stand_in`)
    expect(fake.posts).toEqual([{ path: '/oidc/interaction/uid-123/consent', body: '{}', withSession: true, origin: server.origin }])

    // Deny posts /abort and follows its redirectTo.
    await page.goto(ui('consent', { interaction: 'uid-123' }))
    await page.getByRole('button', { name: 'Deny' }).click()
    await page.waitForURL(`${server.base}/ui/error?error=access_denied`)
    expect(fake.posts[1]).toEqual({ path: '/oidc/interaction/uid-123/abort', body: '{}', withSession: true, origin: server.origin })
    await context.close()
  })

  it('sign-out: ends the Gatehouse session, then posts xsrf and logout=yes to the end-session form (OIDC stand-in)', async () => {
    const user = await signUp(server.base, { password: PASSWORD })
    const token = user.client.jar.get('better-auth.session_token') ?? ''
    const { context, page } = await newPage(browser, PAGE)
    await context.addCookies([{ name: 'better-auth.session_token', value: token, url: server.origin }])
    const fake = await fakeOidcInteraction(page)
    const action = `${server.base}/oidc/session/end/confirm`
    await page.goto(ui('sign-out', { action, xsrf: 'xsrf-token-1' }))
    await page.getByRole('heading', { level: 1, name: 'Sign out' }).waitFor()
    expect(await axe(page)).toEqual([])
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(ui('sign-out', { done: '1' }))
    await page.getByTestId('signed-out').waitFor()
    expect(await axe(page)).toEqual([])
    expect(fake.posts).toEqual([
      { path: '/oidc/session/end/confirm', body: 'xsrf=xsrf-token-1&logout=yes', withSession: false, origin: server.origin },
    ])
    // The session itself is gone on the server.
    expect((await user.client.get('/get-session')).body).toBeNull()

    // An action elsewhere is refused: nothing is posted there.
    await page.goto(ui('sign-out', { action: 'https://evil.example/confirm', xsrf: 'x' }))
    await page.getByText('The sign-out request is not valid.').waitFor()
    await context.close()
  })

  it('error page shows the code and description; themed from the live config', async () => {
    const { context, page } = await newPage(browser, PAGE)
    await page.goto(ui('error', { error: 'access_denied', error_description: '<b>The user said no</b>' }))
    await page.getByTestId('error-summary').filter({ hasText: 'Access was denied.' }).waitFor()
    // Text, never markup.
    expect(await page.getByTestId('error-description').textContent()).toBe('<b>The user said no</b>')
    expect(await axe(page)).toEqual([])

    // Theme: the name, the logo (from its own origin, allowed by img-src) and the colour.
    expect(await page.getByTestId('app-name').textContent()).toBe('Acme Sign-In')
    expect(await page.locator('[data-testid="brand"] img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1)
    expect(await page.title()).toBe('Something went wrong · Acme Sign-In')
    await page.goto(ui('sign-in'))
    const button = page.getByRole('button', { name: 'Sign in', exact: true })
    expect(await button.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(107, 47, 160)')

    // Changed through the panel's Settings operation: the next page load shows it.
    const panel = createPanelService({
      gatehouse: server.gatehouse,
      apiURL: () => server.base,
      mode: 'browser',
      version: 'test',
      startedAt: Date.now(),
      logger: silentLogger,
    })
    const refused = await panel.dispatch('settings.update', { patch: { hostedPages: { color: 'purple' } } })
    expect(refused.ok).toBe(false)
    expect(refused.ok ? null : refused.error.message).toBe('hostedPages.color: must be a hex colour such as #1c64d8')
    const changed = await panel.dispatch('settings.update', { patch: { appName: 'Team Login', hostedPages: { color: '#0b7a3e' } } })
    expect(changed.ok).toBe(true)
    await page.reload()
    await page.getByRole('heading', { level: 1, name: 'Sign in to Team Login' }).waitFor()
    expect(await button.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(11, 122, 62)')
    expect(await axe(page)).toEqual([])
    server.gatehouse.config.update({ appName: 'Acme Sign-In', hostedPages: { color: COLOR } })
    await context.close()
  })

  it('no page met a CSP violation or a script error (and the watch does see one)', async () => {
    expect(cspViolations).toEqual([])
    // The same page with a nonce that does not match its meta tag: Mantine's <style> elements are refused, and seen.
    const seen: string[] = []
    const { context, page } = await newPage(browser, { cspViolations: seen, errors: seen })
    await page.route(ui('sign-in'), async (route) => {
      const response = await route.fetch()
      const headers = response.headers()
      headers['content-security-policy'] = (headers['content-security-policy'] ?? '').replace(/'nonce-[^']+'/, "'nonce-not-the-one'")
      await route.fulfill({ response, headers })
    })
    await page.goto(ui('sign-in'))
    await expect.poll(() => seen.length, { timeout: 20_000 }).toBeGreaterThan(0)
    expect(seen.join('\n')).toContain('style-src')
    await context.close()
  })
})

interface FakePost {
  path: string
  body: string
  withSession: boolean
  origin: string | null
}

/**
 * STAND-IN for the OIDC feature (branch r3-oidc), routed inside the browser on the server's own
 * origin: the interaction JSON and its consent/abort answers, and the end-session confirm form,
 * shaped as the contract says. Records what the pages post.
 */
async function fakeOidcInteraction(page: Page): Promise<{ posts: FakePost[] }> {
  const posts: FakePost[] = []
  const base = new URL(server.base).pathname
  await page.route(`${server.base}/oidc/**`, async (route: Route) => {
    const request = route.request()
    const path = new URL(request.url()).pathname.slice(base.length)
    const headers = await request.allHeaders()
    if (request.method() === 'POST') {
      posts.push({
        path,
        body: request.postData() ?? '',
        withSession: (headers.cookie ?? '').includes('better-auth.session_token='),
        origin: headers.origin ?? null,
      })
    }
    if (request.method() === 'GET' && path === '/oidc/interaction/uid-123') {
      return route.fulfill({
        json: {
          uid: 'uid-123',
          prompt: 'consent',
          client: { clientId: 'grafana', name: 'Grafana', logo: logoURL },
          scopes: ['openid', 'profile', 'email'],
        },
      })
    }
    if (request.method() === 'POST' && path === '/oidc/interaction/uid-123/consent') {
      return route.fulfill({ json: { redirectTo: `${server.base}/ui/error?error=consent_given_stand_in` } })
    }
    if (request.method() === 'POST' && path === '/oidc/interaction/uid-123/abort') {
      return route.fulfill({ json: { redirectTo: `${server.base}/ui/error?error=access_denied` } })
    }
    if (request.method() === 'POST' && path === '/oidc/session/end/confirm') {
      return route.fulfill({ status: 303, headers: { location: `${server.base}/ui/sign-out?done=1` } })
    }
    return route.fulfill({ status: 404, json: { code: 'NOT_FOUND', message: 'Not Found' } })
  })
  return { posts }
}
