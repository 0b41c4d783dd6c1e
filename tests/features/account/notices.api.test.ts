import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { URI, type TOTP } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setUserPassword, systemActor } from '../../../server/features/admin/index.js'
import { mailOutbox } from '../../../server/db/schema.js'
import { HttpClient, type SignedUp, signUp } from '../../helpers/http.js'
import { TestClock } from '../../helpers/server.js'
import type { ReceivedMail } from '../../helpers/smtp.js'
import { type MailServer, settle, startMailServer, withMail } from '../../helpers/mail-flow.js'

/**
 * Issue 49 §11: the security notices, through the real HTTP API, read from the real SMTP sink (SQLite,
 * and PostgreSQL in the `postgres` project): each arrives at the right address with its subject, the
 * time, the device and address, and the links to the account center; each `accountNotices.<x>: false`
 * suppresses it; a sign-in from a new device (browser and system, IPv4 /24, IPv6 /64) is told, a known
 * one and a first sign-in are not.
 */
const clock = new TestClock(Date.parse('2026-11-23T15:55:00Z'))
const FIREFOX_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0'
const CHROME_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const SUBJECT = {
  password: /^Your Gatehouse password was changed$/,
  email: /^The email address of your Gatehouse account was changed$/,
  twoFactor: /^Two-factor authentication was turned off for your Gatehouse account$/,
  passkey: /^A passkey was added to your Gatehouse account$/,
  appPassword: /^An app password was created for your Gatehouse account$/,
  signIn: /^New sign-in to your Gatehouse account$/,
}

let m: MailServer
beforeAll(async () => {
  m = await startMailServer(
    {
      user: { changeEmail: { enabled: true, updateEmailWithoutVerification: true } },
      twoFactor: { enabled: true },
      passkey: { enabled: true },
    },
    clock,
  )
})
afterAll(() => m.close())

const kinds = async (to: string) =>
  (await m.server.gatehouse.ctx.db.select().from(mailOutbox))
    .filter((r) => r.to === to)
    .map((r) => r.kind)
    .sort()
const switchOff = async (key: string) => {
  await m.server.gatehouse.config.update({ accountNotices: { [key]: false } })
}
const switchBack = async (key: string) => {
  await m.server.gatehouse.config.update({ accountNotices: { [key]: null } })
}

/** The config block of docs/ACCOUNT.md's "Security notices" section. */
function docsSwitch(): Record<string, unknown> {
  const doc = readFileSync(new URL('../../../docs/ACCOUNT.md', import.meta.url), 'utf8')
  const section = doc.slice(doc.indexOf('## Security notices'))
  const block = section.match(/```json\n([\s\S]*?)```/)?.[1]
  if (!block) throw new Error('docs/ACCOUNT.md: no config block under "Security notices"')
  const parsed = JSON.parse(block) as Record<string, unknown>
  expect(parsed).toEqual({ accountNotices: { newDeviceSignIn: false } })
  return parsed
}

/** Turns TOTP on for the person: enrolled, then confirmed with a code computed from the URI's secret. */
async function enrolTotp(p: SignedUp): Promise<void> {
  const enable = await p.client.post<{ totpURI: string }>('/two-factor/enable', { password: p.password })
  expect(enable.status).toBe(200)
  const totp = URI.parse(enable.body.totpURI) as TOTP
  expect((await p.client.post('/two-factor/verify-totp', { code: totp.generate({ timestamp: clock.now() }) })).status).toBe(200)
}

/** A request's browser and address (the loopback peer is a trusted proxy: X-Forwarded-For counts). */
const device = (userAgent: string, ip: string) => ({ 'user-agent': userAgent, 'x-forwarded-for': ip })

/** The account center's links and the "not you" advice every notice carries. */
function expectAccountLinks(mail: ReceivedMail): void {
  const base = m.server.base
  expect(mail.text).toContain(`Open your account: ${base}/ui/account\n`)
  expect(mail.text).toContain(`you do not recognise at ${base}/ui/account/activity`)
  expect(mail.html).toContain(`href="${base}/ui/account"`)
}

describe('each notice arrives at the right address', () => {
  it('password changed: the time, the device and address of the change, the links', async () => {
    const ada = await signUp(m.server.base)
    const { result, mail } = await withMail(m, ada.email, SUBJECT.password, () =>
      ada.client.post(
        '/change-password',
        { currentPassword: ada.password, newPassword: 'another long password' },
        device(FIREFOX_WINDOWS, '192.0.2.10'),
      ),
    )
    expect(result.status).toBe(200)
    expect(mail.to).toEqual([ada.email])
    expect(mail.text).toContain(`On 2026-11-23 15:55 UTC the password of your Gatehouse account (${ada.email}) was changed.`)
    expect(mail.text).toContain('From: Firefox on Windows, address 192.0.2.10.')
    expect(mail.text).toContain('If you did not do this, reset your password now')
    expectAccountLinks(mail)
  })

  it('password set by an administrator: told, without the administrator’s device', async () => {
    const ada = await signUp(m.server.base)
    const { mail } = await withMail(m, ada.email, SUBJECT.password, () =>
      setUserPassword(m.server.gatehouse.ctx, systemActor('cli'), { userId: ada.user.id, newPassword: 'set by the admin' }, null),
    )
    expect(mail.text).toContain('was set by an administrator.')
    expect(mail.text).not.toContain('From:')
  })

  it('email changed: the old address is told, the new one is masked', async () => {
    const ada = await signUp(m.server.base)
    const newEmail = `moved-${ada.email}`
    const { result, mail } = await withMail(m, ada.email, SUBJECT.email, () => ada.client.post('/change-email', { newEmail }))
    expect(result.status).toBe(200)
    expect(mail.to).toEqual([ada.email])
    expect(mail.text).toContain(`was changed from ${ada.email} to m***`)
    expect(mail.text).not.toContain(newEmail)
    expectAccountLinks(mail)
    expect(await kinds(newEmail)).not.toContain('email-changed-notice')
  })

  it('second factor turned off: TOTP enrolled with a real code, then disabled', async () => {
    const ada = await signUp(m.server.base)
    await enrolTotp(ada)
    const { result, mail } = await withMail(m, ada.email, SUBJECT.twoFactor, () =>
      ada.client.post('/two-factor/disable', { password: ada.password }),
    )
    expect(result.status).toBe(200)
    expect(mail.to).toEqual([ada.email])
    expect(mail.text).toContain('two-factor authentication was turned off')
    expectAccountLinks(mail)
  })

  it('cancelling a TOTP enrolment that was never confirmed turns nothing off: no notice', async () => {
    const ada = await signUp(m.server.base)
    expect((await ada.client.post('/two-factor/enable', { password: ada.password })).status).toBe(200)
    expect((await ada.client.post('/two-factor/disable', { password: ada.password })).status).toBe(200)
    await settle(m)
    expect(await kinds(ada.email)).not.toContain('two-factor-disabled-notice')
  })

  it('new passkey: registered through the WebAuthn ceremony with a software authenticator', async () => {
    const ada = await signUp(m.server.base)
    const { result, mail } = await withMail(m, ada.email, SUBJECT.passkey, () => registerPasskey(ada, 'Work laptop'))
    expect(result.status).toBe(200)
    expect(mail.to).toEqual([ada.email])
    expect(mail.text).toContain('a passkey named "Work laptop" was added')
    expectAccountLinks(mail)
  })

  it('new app password', async () => {
    const ada = await signUp(m.server.base)
    const { result, mail } = await withMail(m, ada.email, SUBJECT.appPassword, () =>
      ada.client.post('/app-password/create', { name: 'NAS' }),
    )
    expect(result.status).toBe(200)
    expect(mail.to).toEqual([ada.email])
    expect(mail.text).toContain('an app password named "NAS" was created')
    expectAccountLinks(mail)
  })
})

describe('templates', () => {
  it('a notice follows its kind’s template edited like the other messages (mail.templates), its link kept', async () => {
    await m.server.gatehouse.config.update({
      mail: {
        templates: { 'app-password-created-notice': { subject: '{{appName}}: new app password', body: 'Heads up.\n\n{{message}}' } },
      },
    })
    try {
      const ada = await signUp(m.server.base)
      const { mail } = await withMail(m, ada.email, /^Gatehouse: new app password$/, () =>
        ada.client.post('/app-password/create', { name: 'NAS' }),
      )
      expect(mail.text).toMatch(/^Heads up\.\r?\nOn 2026-11-23 15:55 UTC an app password named "NAS" was created/)
      expectAccountLinks(mail)
    } finally {
      await m.server.gatehouse.config.update({ mail: { templates: null } })
    }
  })
})

describe('accountNotices.<x>: false suppresses its notice', () => {
  it.each([
    [
      'passwordChanged',
      'password-changed-notice',
      (p: SignedUp) => p.client.post('/change-password', { currentPassword: p.password, newPassword: 'another long password' }),
    ],
    ['emailChanged', 'email-changed-notice', (p: SignedUp) => p.client.post('/change-email', { newEmail: `moved-${p.email}` })],
    ['twoFactorDisabled', 'two-factor-disabled-notice', (p: SignedUp) => p.client.post('/two-factor/disable', { password: p.password })],
    ['passkeyAdded', 'passkey-added-notice', (p: SignedUp) => registerPasskey(p, 'Key')],
    ['appPasswordCreated', 'app-password-created-notice', (p: SignedUp) => p.client.post('/app-password/create', { name: 'NAS' })],
  ] as const)('%s', async (key, kind, act) => {
    const ada = await signUp(m.server.base)
    if (key === 'twoFactorDisabled') await enrolTotp(ada)
    await switchOff(key)
    try {
      expect((await act(ada)).status).toBe(200)
      await settle(m)
      expect(await kinds(ada.email)).not.toContain(kind)
    } finally {
      await switchBack(key)
    }
    // Switched back on, the same step is told again (the test above would fail without the switch).
    const bob = await signUp(m.server.base)
    if (key === 'twoFactorDisabled') await enrolTotp(bob)
    expect((await act(bob)).status).toBe(200)
    await settle(m)
    expect(await kinds(bob.email)).toContain(kind)
  })
})

describe('sign-in from a new device', () => {
  const signIn = (p: SignedUp, userAgent: string, ip: string) =>
    new HttpClient(m.server.base).post('/sign-in/email', { email: p.email, password: p.password }, device(userAgent, ip))
  const told = async (p: SignedUp) => (await kinds(p.email)).filter((k) => k === 'new-sign-in-notice').length

  it('never the first sign-in after sign-up; a known device and network is quiet; a new browser or network is told', async () => {
    const ada = await signUp(m.server.base)
    // First sign-in after sign-up, from another device than the sign-up's: nothing.
    expect((await signIn(ada, FIREFOX_WINDOWS, '192.0.2.10')).status).toBe(200)
    // The same browser and system in the same /24: known.
    expect((await signIn(ada, FIREFOX_WINDOWS, '192.0.2.77')).status).toBe(200)
    await settle(m)
    expect(await told(ada)).toBe(0)

    // Another browser and system from a known address: told, with what, when and where.
    const { mail } = await withMail(m, ada.email, SUBJECT.signIn, () => signIn(ada, CHROME_LINUX, '192.0.2.10'))
    expect(mail.to).toEqual([ada.email])
    expect(mail.text).toContain(`On 2026-11-23 15:55 UTC someone signed in to your Gatehouse account (${ada.email})`)
    expect(mail.text).toContain('From: Chrome on Linux, address 192.0.2.10.')
    expect(mail.text).toContain('If it was not you, change your password now.')
    expectAccountLinks(mail)
    // Now known.
    expect((await signIn(ada, CHROME_LINUX, '192.0.2.10')).status).toBe(200)
    await settle(m)
    expect(await told(ada)).toBe(1)

    // A known browser from another /24: told.
    await withMail(m, ada.email, SUBJECT.signIn, () => signIn(ada, FIREFOX_WINDOWS, '198.51.100.5'))
    // IPv6: a new /64 is told, another address in it is not.
    await withMail(m, ada.email, SUBJECT.signIn, () => signIn(ada, FIREFOX_WINDOWS, '2001:db8:1:2::5'))
    expect((await signIn(ada, FIREFOX_WINDOWS, '2001:db8:1:2:ffff::99')).status).toBe(200)
    await settle(m)
    expect(await told(ada)).toBe(3)
  })

  it('accountNotices.newDeviceSignIn: false suppresses it', async () => {
    const ada = await signUp(m.server.base)
    expect((await signIn(ada, FIREFOX_WINDOWS, '192.0.2.10')).status).toBe(200)
    // The block docs/ACCOUNT.md gives, as it is written there.
    await m.server.gatehouse.config.update(docsSwitch())
    try {
      expect((await signIn(ada, CHROME_LINUX, '203.0.113.9')).status).toBe(200)
      await settle(m)
      expect(await told(ada)).toBe(0)
    } finally {
      await switchBack('newDeviceSignIn')
    }
    // A sign-in made while switched off still counts as seen; another new device is told once it is on.
    expect((await signIn(ada, CHROME_LINUX, '203.0.113.10')).status).toBe(200)
    await settle(m)
    expect(await told(ada)).toBe(0)
    await withMail(m, ada.email, SUBJECT.signIn, () => signIn(ada, FIREFOX_WINDOWS, '203.0.113.10'))
  })

  // Last: it moves the clock past the sessions' and the history's 90 days.
  it('a device last seen more than 90 days ago is new again', async () => {
    const ada = await signUp(m.server.base)
    expect((await signIn(ada, FIREFOX_WINDOWS, '192.0.2.10')).status).toBe(200)
    expect((await signIn(ada, CHROME_LINUX, '192.0.2.10')).status).toBe(200)
    expect(await told(ada)).toBe(1)
    clock.advance(89 * 86_400_000)
    expect((await signIn(ada, CHROME_LINUX, '192.0.2.10')).status).toBe(200)
    expect(await told(ada)).toBe(1)
    clock.advance(2 * 86_400_000)
    // Firefox was last seen 91 days ago; Chrome 2 days ago.
    expect((await signIn(ada, CHROME_LINUX, '192.0.2.10')).status).toBe(200)
    expect(await told(ada)).toBe(1)
    await withMail(m, ada.email, SUBJECT.signIn, () => signIn(ada, FIREFOX_WINDOWS, '192.0.2.10'))
  })
})

// ------------------------------------------------------------------------------------------------
// A software authenticator: a P-256 key, "none" attestation, the WebAuthn registration ceremony.

const b64url = (b: Buffer) => b.toString('base64url')

/** CBOR (RFC 8949) of the few shapes a "none" attestation needs: small maps, ints, text and byte strings. */
function cbor(value: unknown): Buffer {
  const head = (major: number, n: number): Buffer => {
    if (n < 24) return Buffer.from([(major << 5) | n])
    if (n < 256) return Buffer.from([(major << 5) | 24, n])
    return Buffer.from([(major << 5) | 25, n >> 8, n & 255])
  }
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value)
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)])
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value])
  if (value instanceof Map) {
    return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])])
  }
  throw new Error(`no CBOR for ${String(value)}`)
}

async function registerPasskey(p: SignedUp, name: string) {
  const options = await p.client.get<{ challenge: string; rp: { id: string } }>('/passkey/generate-register-options')
  if (options.status !== 200) throw new Error(`register options: ${options.status} ${options.text}`)
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const jwk = publicKey.export({ format: 'jwk' })
  const coseKey = cbor(
    new Map<number, unknown>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x as string, 'base64url')],
      [-3, Buffer.from(jwk.y as string, 'base64url')],
    ]),
  )
  const credentialId = randomBytes(32)
  const idLength = Buffer.from([credentialId.length >> 8, credentialId.length & 255])
  const authData = Buffer.concat([
    createHash('sha256').update(options.body.rp.id).digest(),
    Buffer.from([0x45]), // user present, user verified, attested credential data
    Buffer.alloc(4),
    Buffer.alloc(16), // AAGUID
    idLength,
    credentialId,
    coseKey,
  ])
  const attestationObject = cbor(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData],
    ]),
  )
  const clientDataJSON = Buffer.from(
    JSON.stringify({ type: 'webauthn.create', challenge: options.body.challenge, origin: m.server.origin, crossOrigin: false }),
  )
  return p.client.post('/passkey/verify-registration', {
    name,
    response: {
      id: b64url(credentialId),
      rawId: b64url(credentialId),
      type: 'public-key',
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    },
  })
}
