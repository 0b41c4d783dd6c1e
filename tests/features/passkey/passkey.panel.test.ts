import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { build } from 'esbuild'
import type { Browser, CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditEvent, passkey } from '../../../server/db/schema.js'
import { createPanelService } from '../../../server/panel/service.js'
import { uniqueEmail } from '../../helpers/http.js'
import { silentLogger, startTestServer, type TestServer, sqliteOf } from '../../helpers/server.js'
// The one place this file launches Chromium (the shared launch may move to tests/helpers/browser.ts).
import { launchChromium } from '../../panel/harness.js'

/**
 * Passkeys end to end: real Chromium with a CDP virtual authenticator, the official passkeyClient
 * bundled into a small page served on http://localhost (a secure context), whose /api/auth is
 * proxied to the real Gatehouse so the page, its cookies and its WebAuthn origin are one origin.
 */

const PASSWORD = 'correct horse battery'
let server: TestServer
let browser: Browser
let script: string
const pages: Server[] = []

/** A page server on localhost: the test page, its bundle, and /api/auth proxied to Gatehouse. */
async function pageServer(): Promise<string> {
  const http = createServer(async (req, res) => {
    if (req.url === '/') {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><html><body><script type="module" src="/app.js"></script></body></html>')
      return
    }
    if (req.url === '/app.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script)
      return
    }
    if (!req.url?.startsWith('/api/auth/')) {
      res.writeHead(404).end()
      return
    }
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const headers: Record<string, string> = {}
    for (const name of ['cookie', 'origin', 'content-type', 'user-agent']) {
      const v = req.headers[name]
      if (typeof v === 'string') headers[name] = v
    }
    const answer = await fetch(`${server.origin}${req.url}`, {
      method: req.method,
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks),
      redirect: 'manual',
    })
    const out: Record<string, string | string[]> = {}
    answer.headers.forEach((v, k) => {
      if (k !== 'set-cookie' && k !== 'content-length' && k !== 'content-encoding') out[k] = v
    })
    out['set-cookie'] = answer.headers.getSetCookie()
    res.writeHead(answer.status, out).end(Buffer.from(await answer.arrayBuffer()))
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  pages.push(http)
  return `http://localhost:${(http.address() as AddressInfo).port}`
}

let good: string
let other: string

beforeAll(async () => {
  const bundle = await build({
    entryPoints: [join(import.meta.dirname, 'passkey-page.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  })
  script = bundle.outputFiles[0]?.text ?? ''
  server = await startTestServer()
  good = await pageServer()
  other = await pageServer()
  // Both page origins may call the API (CSRF check); only `good` is a passkey origin.
  server.gatehouse.config.update({
    trustedOrigins: [good, other],
    passkey: { enabled: true, rpID: 'localhost', rpName: 'Gatehouse test', origin: good },
  })
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  for (const p of pages) await new Promise((r) => p.close(r))
  await server?.close()
})

async function authenticator(page: Page): Promise<{ cdp: CDPSession; id: string }> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
  return { cdp, id: authenticatorId }
}

async function open(page: Page, origin: string): Promise<void> {
  await page.goto(`${origin}/`)
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' })
}

type Result = { data: Record<string, unknown> | null; error: { status: number; code?: string; message?: string } | null }

const call = (page: Page, fn: string, arg?: unknown): Promise<Result> =>
  page.evaluate(
    async ({ fn, arg }) => {
      // biome-ignore lint/suspicious/noExplicitAny: the page's client, reached by path
      let target: any = (window as any).auth
      const path = fn.split('.')
      const last = path.pop() as string
      for (const p of path) target = target[p]
      const r = await target[last](arg)
      return JSON.parse(JSON.stringify({ data: r.data ?? null, error: r.error ?? null }))
    },
    { fn, arg },
  )

async function signedUpUser(page: Page): Promise<string> {
  const email = uniqueEmail('passkey')
  const up = await call(page, 'signUp.email', { name: 'Pass Key', email, password: PASSWORD })
  expect(up.error).toBeNull()
  return email
}

const rows = (userId: string) =>
  sqliteOf(server.gatehouse.ctx).prepare('SELECT * FROM passkey WHERE userId = ?').all(userId) as Array<{
    id: string
    counter: number
    backedUp: number
    deviceType: string
    credentialID: string
    name: string
  }>

describe('passkeys in real Chromium with a virtual authenticator (official passkeyClient)', () => {
  it('registers, signs in without an email (discoverable), the counter grows; a clone with an old counter is refused', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await open(page, good)
    const a = await authenticator(page)
    const email = await signedUpUser(page)

    const added = await call(page, 'passkey.addPasskey', { name: 'Laptop' })
    expect(added.error).toBeNull()
    expect(added.data).toMatchObject({ name: 'Laptop', deviceType: 'singleDevice', backedUp: false, transports: 'internal' })
    const userId = added.data?.userId as string
    const [stored] = rows(userId)
    expect(stored?.credentialID).toBe(added.data?.credentialID)

    const listed = await call(page, 'passkey.listUserPasskeys')
    expect((listed.data as unknown as unknown[]).length).toBe(1)

    // The authenticator's state right after registration: the clone below starts from it.
    const { credentials } = await a.cdp.send('WebAuthn.getCredentials', { authenticatorId: a.id })
    expect(credentials).toHaveLength(1)
    const exported = credentials[0] as NonNullable<(typeof credentials)[0]>
    expect(exported.isResidentCredential).toBe(true)

    await call(page, 'signOut')
    const first = await call(page, 'signIn.passkey')
    expect(first.error).toBeNull()
    expect(first.data).toMatchObject({ user: { email } })
    const afterFirst = rows(userId)[0]?.counter as number
    expect(afterFirst).toBeGreaterThan(0)
    const session = await call(page, 'getSession')
    expect(session.data).toMatchObject({ user: { email } })

    await call(page, 'signOut')
    const second = await call(page, 'signIn.passkey')
    expect(second.error).toBeNull()
    const afterSecond = rows(userId)[0]?.counter as number
    expect(afterSecond).toBeGreaterThan(afterFirst)

    // Clone: the same private key on a second authenticator, with the old signature counter.
    await call(page, 'signOut')
    await a.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: a.id })
    const b = await authenticator(page)
    await b.cdp.send('WebAuthn.addCredential', { authenticatorId: b.id, credential: { ...exported, signCount: exported.signCount } })
    const cloned = await call(page, 'signIn.passkey')
    expect(cloned.error).toMatchObject({ status: 400, code: 'AUTHENTICATION_FAILED', message: 'Authentication failed' })
    expect(rows(userId)[0]?.counter).toBe(afterSecond)
    expect((await call(page, 'getSession')).data).toBeNull()
    const refused = server.gatehouse.ctx.db
      .select()
      .from(auditEvent)
      .all()
      .filter((e) => e.type === 'passkey.sign-in' && e.outcome === 'failure' && e.targetUserId === userId)
    expect(JSON.stringify(refused.map((e) => e.detail))).toMatch(/counter/i)
    await context.close()
  })

  it('refuses a registration and a sign-in from an origin that is not a passkey origin', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await open(page, good)
    await authenticator(page)
    const owner = await signedUpUser(page)
    expect((await call(page, 'passkey.addPasskey', { name: 'Good' })).error).toBeNull()
    await call(page, 'signOut')

    // Same relying party (localhost), another port: the browser signs, the server refuses.
    await open(page, other)
    const login = await call(page, 'signIn.passkey')
    expect(login.error).toMatchObject({ status: 400, code: 'AUTHENTICATION_FAILED' })
    // A user without a passkey yet (the authenticator would refuse to register one twice).
    await signedUpUser(page)
    const register = await call(page, 'passkey.addPasskey', { name: 'Bad' })
    expect(register.error).toMatchObject({ status: 500, code: 'FAILED_TO_VERIFY_REGISTRATION', message: 'Failed to verify registration' })
    const names = server.gatehouse.ctx.db
      .select()
      .from(passkey)
      .all()
      .map((p) => p.name)
    expect(names).not.toContain('Bad')

    // An administrator removes the passkey from the panel: audited, the owner is told by mail, it no longer signs in.
    const panel = createPanelService({
      gatehouse: server.gatehouse,
      apiURL: () => server.base,
      mode: 'browser',
      version: 'test',
      startedAt: Date.now(),
      logger: silentLogger,
    })
    const ownerId = (sqliteOf(server.gatehouse.ctx).prepare('SELECT id FROM user WHERE email = ?').get(owner) as { id: string }).id
    const factors = await panel.dispatch('twoFactor.userFactors', { userId: ownerId })
    const keys = factors.ok ? (factors.data as { passkeys: Array<{ id: string; name: string }> }).passkeys : []
    expect(keys.map((k) => k.name)).toEqual(['Good'])
    expect(await panel.dispatch('passkey.remove', { userId: ownerId, passkeyId: keys[0]?.id })).toEqual({
      ok: true,
      data: { success: true },
    })
    const notice = sqliteOf(server.gatehouse.ctx)
      .prepare('SELECT kind, text FROM mailOutbox WHERE "to" = ? ORDER BY createdAt DESC')
      .get(owner) as { kind: string; text: string }
    expect(notice.kind).toBe('security-notice')
    expect(notice.text).toContain('the passkey "Good"')
    expect(
      server.gatehouse.ctx.db
        .select()
        .from(auditEvent)
        .all()
        .some((e) => e.type === 'passkey.removed' && e.targetUserId === ownerId),
    ).toBe(true)
    await call(page, 'signOut')
    await open(page, good)
    const gone = await call(page, 'signIn.passkey')
    expect(gone.error).toMatchObject({ status: 401, code: 'PASSKEY_NOT_FOUND' })
    await context.close()
  })

  it('works on a host name other than localhost (rpID and origin from config)', async () => {
    // Chromium resolves *.localhost to loopback and treats it as a secure context: a stand-in for a LAN name.
    const lan = good.replace('//localhost:', '//gatehouse.localhost:')
    const before = server.gatehouse.config.get()
    server.gatehouse.config.update({ trustedOrigins: [good, other, lan], passkey: { rpID: 'gatehouse.localhost', origin: lan } })
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      await open(page, lan)
      await authenticator(page)
      const email = await signedUpUser(page)
      const added = await call(page, 'passkey.addPasskey', { name: 'LAN' })
      expect(added.error).toBeNull()
      await call(page, 'signOut')
      const signedIn = await call(page, 'signIn.passkey')
      expect(signedIn.error).toBeNull()
      expect(signedIn.data).toMatchObject({ user: { email } })
    } finally {
      await context.close()
      server.gatehouse.config.update({ trustedOrigins: before.trustedOrigins, passkey: { rpID: 'localhost', origin: good } })
    }
  })

  it('renames and deletes its own passkeys; another user cannot', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await open(page, good)
    await authenticator(page)
    await signedUpUser(page)
    const added = await call(page, 'passkey.addPasskey', { name: 'Phone' })
    const id = added.data?.id as string
    const renamed = await call(page, 'passkey.updatePasskey', { id, name: 'Work phone' })
    expect(renamed.data).toMatchObject({ passkey: { id, name: 'Work phone' } })

    const intruder = await browser.newContext()
    const ipage = await intruder.newPage()
    await open(ipage, good)
    await signedUpUser(ipage)
    expect((await call(ipage, 'passkey.deletePasskey', { id })).error).toMatchObject({ status: 401 })
    expect((await call(ipage, 'passkey.updatePasskey', { id, name: 'x' })).error).toMatchObject({
      status: 401,
      code: 'YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY',
    })
    expect((await call(ipage, 'passkey.deletePasskey', { id: 'nope' })).error).toMatchObject({ status: 404, code: 'PASSKEY_NOT_FOUND' })

    expect((await call(page, 'passkey.deletePasskey', { id })).data).toEqual({ status: true })
    expect((await call(page, 'passkey.listUserPasskeys')).data).toEqual([])
    await intruder.close()
    await context.close()
  })
})
