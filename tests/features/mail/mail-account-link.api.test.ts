import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { signUp, uniqueEmail } from '../../helpers/http.js'
import { anonymous, type MailServer, startMailServer, withMail } from '../../helpers/mail-flow.js'
import { silentLogger } from '../../helpers/server.js'
import type { ReceivedMail } from '../../helpers/smtp.js'

/**
 * Every message of the shared layout ends with a line to the recipient's account center (issue 49:
 * the account center is reachable from every mail): "Manage your account: {baseURL}/ui/account",
 * in the text and the HTML part, an edited template included. Left out when hosted pages are off,
 * for an address that has no account (a sign-up magic link), and where the message's own button
 * already leads there (the security notices). Mails read from the real SMTP sink.
 */

let m: MailServer
let panel: PanelService
const account = () => `${m.server.base}/ui/account`

beforeAll(async () => {
  m = await startMailServer({ emailVerification: { sendOnSignUp: true }, emailOTP: { enabled: true }, mail: { appName: 'Acme' } })
  await m.server.gatehouse.config.update({ magicLink: { enabled: true } })
  panel = createPanelService({
    gatehouse: m.server.gatehouse,
    apiURL: () => m.server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
})
afterAll(() => m?.close())

async function data<T>(name: string, input: unknown = {}): Promise<T> {
  const result = (await panel.dispatch(name, input)) as { ok: true; data: T } | { ok: false; error: unknown }
  if (!result.ok) throw new Error(`${name}: ${JSON.stringify(result.error)}`)
  return result.data
}

function expectAccountLine(mail: ReceivedMail) {
  expect(mail.text).toContain(`Manage your account: ${account()}\n`)
  expect(mail.html).toContain(`Manage your account: <a href="${account()}">${account()}</a>`)
}
function expectNoAccountLine(mail: ReceivedMail) {
  expect(mail.text).not.toContain('Manage your account')
  expect(mail.text).not.toContain(account())
  expect(mail.html).not.toContain('Manage your account')
}

const signedUp = async (tag: string) => {
  const email = uniqueEmail(tag)
  const { mail } = await withMail(m, email, /^Verify your email address for Acme$/, () => signUp(m.server.base, { email }))
  return { email, verification: mail }
}

describe('the account-center line in mails', () => {
  it('ends the verification, password reset, magic link and email code mails of an account, after the footer', async () => {
    const { email, verification } = await signedUp('acct-line')
    expectAccountLine(verification)
    // Under the footer, before the signature; the message's own link stays the first.
    expect(
      verification.text.replace(/\r\n/g, '\n').endsWith(`you can ignore this message.\n\nManage your account: ${account()}\n\n— Acme`),
    ).toBe(true)
    expect(/https?:\/\/\S+/.exec(verification.text)?.[0]).toContain('/verify-email?token=')

    const reset = await withMail(m, email, /^Reset your Acme password$/, () =>
      anonymous(m.server).post('/request-password-reset', { email, redirectTo: '/reset' }),
    )
    expect(reset.result.status).toBe(200)
    expectAccountLine(reset.mail)

    const magic = await withMail(m, email, /^Sign in to Acme$/, () => anonymous(m.server).post('/sign-in/magic-link', { email }))
    expect(magic.result.status).toBe(200)
    expectAccountLine(magic.mail)

    const code = await withMail(m, email, /^Your Acme sign-in code/, () =>
      anonymous(m.server).post('/email-otp/send-verification-otp', { email, type: 'sign-in' }),
    )
    expect(code.result.status).toBe(200)
    expectAccountLine(code.mail)
  })

  it('is left out for an address with no account: a magic link that would sign up', async () => {
    const email = uniqueEmail('acct-none')
    const magic = await withMail(m, email, /^Sign in to Acme$/, () => anonymous(m.server).post('/sign-in/magic-link', { email }))
    expect(magic.result.status).toBe(200)
    expect(magic.mail.text).toContain('/magic-link/verify?token=')
    expectNoAccountLine(magic.mail)
  })

  it('stays under an edited template (the template is the body, the line is the layout); the preview shows it', async () => {
    await data('email.saveTemplate', { kind: 'password-reset', subject: 'Reset for {{appName}}', body: 'Open {{url}}' })
    try {
      const preview = await data<{ text: string; html: string }>('email.preview', { kind: 'password-reset' })
      expect(preview.text).toContain(`Manage your account: ${account()}`)
      const { email } = await signedUp('acct-tpl')
      const reset = await withMail(m, email, /^Reset for Acme$/, () =>
        anonymous(m.server).post('/request-password-reset', { email, redirectTo: '/reset' }),
      )
      expect(reset.mail.text).toMatch(/^Open http/)
      expectAccountLine(reset.mail)
    } finally {
      await data('email.resetTemplate', { kind: 'password-reset' })
    }
  })

  it('is not repeated where the button already opens the account center (the security notices)', async () => {
    const notice = await data<{ text: string; html: string }>('email.preview', { kind: 'password-changed-notice' })
    expect(notice.text).toContain(`Open your account: ${account()}\n`)
    expect(notice.text).not.toContain('Manage your account')
    expect(notice.html).not.toContain('Manage your account')
  })

  it('is left out while hosted pages are off', async () => {
    const { email } = await signedUp('acct-off')
    await m.server.gatehouse.config.update({ hostedPages: { enabled: false } })
    try {
      const reset = await withMail(m, email, /^Reset your Acme password$/, () =>
        anonymous(m.server).post('/request-password-reset', { email, redirectTo: '/reset' }),
      )
      expect(reset.result.status).toBe(200)
      expect(reset.mail.text).toContain('/reset-password/')
      expectNoAccountLine(reset.mail)
      const preview = await data<{ text: string }>('email.preview', { kind: 'verification' })
      expect(preview.text).not.toContain('Manage your account')
    } finally {
      await m.server.gatehouse.config.update({ hostedPages: { enabled: true } })
    }
  })
})
