import { and, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PanelCaller } from '../../../server/core/panel-caller.js'
import { findUserById } from '../../../server/core/users.js'
import { auditEvent, mailOutbox } from '../../../server/db/schema.js'
import { setRole } from '../../../server/features/admin/users.js'
import { systemActor } from '../../../server/features/admin/actor.js'
import { PANEL_META } from '../../../server/panel-frame/op.js'
import type { PanelService } from '../../../server/panel/service.js'
import { HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { follow } from '../../helpers/mail-flow.js'
import { adminCaller, panelServiceOf } from '../../helpers/panel-session.js'
import { startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { type ReceivedMail, type SmtpSink, startSmtpSink } from '../../helpers/smtp.js'

/**
 * The Users drawer's "Send a set-up link" (issue 49, around it: panel): `users.sendSetUpLink` mails
 * the person a magic link (single-use, one hour) that signs them in and lands on the hosted
 * two-factor page as an enrolment (`/ui/account/two-factor?enrol=1`); audited with the
 * administrator as the actor; refused without `user:update`, and while the hosted pages, magic-link
 * sign-in or two-factor are off. Dispatched as the panel does, the mail read from the real SMTP sink,
 * the link followed over HTTP. Both engines.
 */

let server: TestServer
let sink: SmtpSink
let panel: PanelService
let ada: PanelCaller & { kind: 'admin' }
let sam: PanelCaller
const clock = new TestClock()

beforeAll(async () => {
  sink = await startSmtpSink()
  server = await startTestServer({
    clock,
    config: {
      mail: { smtp: { url: sink.url }, appName: 'Acme' },
      admin: { roles: { support: { user: ['list', 'get'] } } },
    },
  })
  // Through the stored layer, so that a test can switch them off and on.
  await server.gatehouse.config.update({ magicLink: { enabled: true }, twoFactor: { enabled: true } })
  panel = panelServiceOf(server)
  ada = await adminCaller(server, uniqueEmail('setup-ada'))
  const support = await signUp(server.base, { email: uniqueEmail('setup-sam') })
  await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: support.user.id, role: 'support' }, null)
  const row = await findUserById(server.gatehouse.ctx, support.user.id)
  sam = { kind: 'admin', user: row!, access: 'limited', meta: PANEL_META }
})
afterAll(async () => {
  await server?.close()
  await sink?.close()
})

const SUBJECT = /^Set up two-factor authentication for your Acme account$/
const enrolPage = () => `${server.base}/ui/account/two-factor?enrol=1`

async function sendAs(caller: PanelCaller, userId: string) {
  return await panel.dispatch('users.sendSetUpLink', { userId }, caller)
}

async function mailedLink(email: string): Promise<{ mail: ReceivedMail; link: string }> {
  const mail = await sink.waitFor(email, (m) => SUBJECT.test(m.subject) && !seen.has(m))
  seen.add(mail)
  const link = /https?:\/\/\S+/.exec(mail.text)?.[0] ?? ''
  return { mail, link }
}
const seen = new Set<ReceivedMail>()

const sessionEmail = async (client: HttpClient) => (await client.get<{ user: { email: string } } | null>('/get-session')).body?.user.email

describe('users.sendSetUpLink', () => {
  it('mails a link that signs the person in once and lands on the enrolment page; audited as the administrator', async () => {
    const person = await signUp(server.base, { name: 'Nora New' })
    expect(await sendAs(ada, person.user.id)).toEqual({ ok: true, data: { success: true } })

    const { mail, link } = await mailedLink(person.email)
    expect(mail.text).toContain('An administrator of Acme asks you to protect your account')
    expect(mail.text).toContain('valid for 1 hour and can be used once')
    const url = new URL(link)
    expect(`${url.origin}${url.pathname}`).toBe(`${server.base}/magic-link/verify`)
    expect(url.searchParams.get('callbackURL')).toBe(enrolPage())
    // The mail's footer leads to the account center, as every mail's does.
    expect(mail.text).toContain(`Manage your account: ${server.base}/ui/account`)

    const audit = await server.gatehouse.ctx.db
      .select()
      .from(auditEvent)
      .where(and(eq(auditEvent.type, 'admin.send-set-up-link'), eq(auditEvent.targetUserId, person.user.id)))
    expect(audit).toHaveLength(1)
    expect(audit[0]?.actorUserId).toBe(ada.user.id)
    expect(audit[0]?.detail).toMatchObject({ email: person.email, expiresIn: 3600 })

    const browser = new HttpClient(server.base)
    const opened = await follow(browser, link)
    expect(opened.status).toBe(302)
    expect(opened.headers.get('location')).toBe(enrolPage())
    expect(await sessionEmail(browser)).toBe(person.email)
    // The page it lands on reads the person's enrolment with that session.
    const status = await browser.get<{ enabled: boolean; totp: string }>('/two-factor/status')
    expect(status.status).toBe(200)
    expect(status.body).toMatchObject({ enabled: false, totp: 'none' })

    // Single use: the same link again signs nobody in.
    const again = new HttpClient(server.base)
    const reopened = await follow(again, link)
    expect(reopened.status).toBe(302)
    expect(new URL(reopened.headers.get('location') ?? '').searchParams.get('error')).toBe('INVALID_TOKEN')
    expect(await sessionEmail(again)).toBeUndefined()
  })

  it('expires after an hour', async () => {
    const person = await signUp(server.base)
    expect((await sendAs(ada, person.user.id)).ok).toBe(true)
    const { link } = await mailedLink(person.email)
    clock.advanceSeconds(3601)
    const browser = new HttpClient(server.base)
    const opened = await follow(browser, link)
    expect(opened.status).toBe(302)
    expect(new URL(opened.headers.get('location') ?? '').searchParams.get('error')).toBe('INVALID_TOKEN')
    expect(await sessionEmail(browser)).toBeUndefined()
  })

  it('is refused without user:update, for an unknown user, and while the hosted pages, magic links or two-factor are off; nothing is mailed', async () => {
    const person = await signUp(server.base)
    expect(await sendAs(sam, person.user.id)).toMatchObject({ ok: false, error: { status: 403 } })
    expect(await sendAs(ada, 'no-such-user')).toMatchObject({ ok: false, error: { status: 404, code: 'USER_NOT_FOUND' } })
    const off = async (config: Record<string, unknown>, back: Record<string, unknown>, code: string) => {
      await server.gatehouse.config.update(config)
      try {
        expect(await sendAs(ada, person.user.id)).toMatchObject({ ok: false, error: { status: 400, code } })
      } finally {
        await server.gatehouse.config.update(back)
      }
    }
    await off({ hostedPages: { enabled: false } }, { hostedPages: { enabled: true } }, 'HOSTED_PAGES_DISABLED')
    await off({ magicLink: { enabled: false } }, { magicLink: { enabled: true } }, 'SET_UP_LINK_NEEDS_MAGIC_LINK')
    await off({ twoFactor: { enabled: false } }, { twoFactor: { enabled: true } }, 'SET_UP_LINK_NEEDS_TWO_FACTOR')
    const queued = await server.gatehouse.ctx.db.select().from(mailOutbox).where(eq(mailOutbox.to, person.email))
    expect(queued.map((m) => m.kind)).not.toContain('set-up-link')
    expect(
      await server.gatehouse.ctx.db
        .select()
        .from(auditEvent)
        .where(
          and(
            eq(auditEvent.type, 'admin.send-set-up-link'),
            eq(auditEvent.targetUserId, person.user.id),
            eq(auditEvent.outcome, 'success'),
          ),
        ),
    ).toEqual([])
  })
})
