import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setUserPassword, systemActor } from '../../../server/features/admin/index.js'
import { mailOutbox, user } from '../../../server/db/schema.js'
import { maskEmail } from '../../../server/mail/templates.js'
import { signUp, uniqueEmail } from '../../helpers/http.js'
import { TestClock } from '../../helpers/server.js'
import { anonymous, follow, linkIn, type MailServer, settle, startMailServer, withMail } from '../../helpers/mail-flow.js'

/**
 * Issue 11: the owner of an account hears, at the old address, that its email changed (both
 * paths), and at its address that its password was changed or reset: the time, the new address
 * masked, what to do. Every notice goes through the outbox.
 */
const CHANGED = /^The email address of your Gatehouse account was changed$/
const PASSWORD = /^Your Gatehouse password was changed$/
const clock = new TestClock(Date.parse('2026-11-23T15:55:00Z'))

let m: MailServer
beforeAll(async () => {
  m = await startMailServer({ user: { changeEmail: { enabled: true } } }, clock)
})
afterAll(() => m.close())

const db = () => m.server.gatehouse.ctx.db
const outboxRow = async (to: string, kind: string) => (await db().select().from(mailOutbox)).filter((r) => r.to === to && r.kind === kind)

describe('masking', () => {
  it('keeps the first and last letter of the local part and the top-level domain', () => {
    expect(maskEmail('jane.doe@example.com')).toBe('j***e@e***.com')
    expect(maskEmail('ab@x.io')).toBe('a***@x***.io')
  })
})

describe('email change notices', () => {
  it('unverified path (updateEmailWithoutVerification): the old address is told at once, with the time and the new address masked', async () => {
    await m.server.gatehouse.config.update({ user: { changeEmail: { updateEmailWithoutVerification: true } } })
    const signed = await signUp(m.server.base)
    const newEmail = uniqueEmail('moved')
    const { result, mail } = await withMail(m, signed.email, CHANGED, () => signed.client.post('/change-email', { newEmail }))
    await m.server.gatehouse.config.update({ user: { changeEmail: { updateEmailWithoutVerification: null } } })
    expect(result.status).toBe(200)
    expect(mail.to).toEqual([signed.email])
    expect(mail.text).toContain('2026-11-23 15:55 UTC')
    expect(mail.text).toContain(maskEmail(newEmail))
    expect(mail.text).not.toContain(newEmail)
    expect(mail.text).toContain('If you did not make this change')
    expect(await outboxRow(signed.email, 'email-changed-notice')).toHaveLength(1)
  })

  it('unverified default path: the notice goes to the old address when the link to the new one is followed, not before', async () => {
    const signed = await signUp(m.server.base)
    const newEmail = uniqueEmail('pending')
    const { mail: verify } = await withMail(m, newEmail, /^Verify your email address/, () =>
      signed.client.post('/change-email', { newEmail }),
    )
    await settle(m)
    expect(await outboxRow(signed.email, 'email-changed-notice')).toHaveLength(0)
    const { mail } = await withMail(m, signed.email, CHANGED, () =>
      follow(anonymous(m.server), linkIn(verify, `${m.server.base}/verify-email`)),
    )
    expect(mail.text).toContain(maskEmail(newEmail))
    expect(await outboxRow(signed.email, 'email-changed-notice')).toHaveLength(1)
  })

  it('confirmed path: the notice goes to the old address once the change is approved, not before', async () => {
    const signed = await signUp(m.server.base)
    await db().update(user).set({ emailVerified: true }).where(eq(user.id, signed.user.id))
    const newEmail = uniqueEmail('confirmed')
    const { mail: confirm } = await withMail(m, signed.email, /^Confirm your new email address/, () =>
      signed.client.post('/change-email', { newEmail }),
    )
    await settle(m)
    expect(await outboxRow(signed.email, 'email-changed-notice')).toHaveLength(0)
    const link = linkIn(confirm, `${m.server.base}/verify-email`)
    const { mail } = await withMail(m, signed.email, CHANGED, () => follow(signed.client, link))
    expect(mail.text).toContain(maskEmail(newEmail))
    expect(mail.text).not.toContain(newEmail)
    expect(await outboxRow(signed.email, 'email-changed-notice')).toHaveLength(1)
  })
})

describe('password notices', () => {
  it('change-password mails the account address', async () => {
    const signed = await signUp(m.server.base)
    const { result, mail } = await withMail(m, signed.email, PASSWORD, () =>
      signed.client.post('/change-password', { currentPassword: signed.password, newPassword: 'another long password' }),
    )
    expect(result.status).toBe(200)
    expect(mail.text).toContain('2026-11-23 15:55 UTC')
    expect(mail.text).toContain('was changed.')
    expect(mail.text).toContain('If you did not do this, reset your password now')
    expect(await outboxRow(signed.email, 'password-changed-notice')).toHaveLength(1)
  })

  it('a reset through the mailed link mails the account address', async () => {
    const signed = await signUp(m.server.base)
    const { mail: resetMail } = await withMail(m, signed.email, /^Reset your Gatehouse password/, () =>
      anonymous(m.server).post('/request-password-reset', { email: signed.email }),
    )
    const token = linkIn(resetMail, `${m.server.base}/reset-password/`).split('/reset-password/')[1]?.split('?')[0] as string
    const { result, mail } = await withMail(m, signed.email, PASSWORD, () =>
      anonymous(m.server).post('/reset-password', { token, newPassword: 'brand new password' }),
    )
    expect(result.status).toBe(200)
    expect(mail.text).toContain('was reset.')
  })

  it('a password set by an administrator mails the account address', async () => {
    const signed = await signUp(m.server.base)
    const { mail } = await withMail(m, signed.email, PASSWORD, () =>
      setUserPassword(m.server.gatehouse.ctx, systemActor('cli'), { userId: signed.user.id, newPassword: 'set by the admin' }, null),
    )
    expect(mail.text).toContain('set by an administrator')
  })

  it('a refused change (wrong current password) sends nothing', async () => {
    const signed = await signUp(m.server.base)
    const res = await signed.client.post('/change-password', { currentPassword: 'wrong password!', newPassword: 'another long password' })
    expect(res.status).toBe(400)
    await settle(m)
    expect(await outboxRow(signed.email, 'password-changed-notice')).toHaveLength(0)
  })
})
