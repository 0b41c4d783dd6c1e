import { BASE_ERROR_CODES } from '@better-auth/core/error'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { account, user } from '../../../server/db/schema.js'
import { firstRow } from '../../../server/db/storage.js'
import { CookieJar, uniqueEmail } from '../../helpers/http.js'
import { officialClient as official } from '../../helpers/official-client.js'
import { linkIn, type MailServer, startMailServer, withMail } from '../../helpers/mail-flow.js'

let m: MailServer
beforeAll(async () => {
  m = await startMailServer()
  await m.server.gatehouse.config.update({
    emailVerification: { sendOnSignUp: true },
    user: { changeEmail: { enabled: true }, deleteUser: { enabled: true } },
  })
})
afterAll(() => m.close())

/** The official client as a browser app uses it: cookies in a jar, the app's Origin on every call. */
function officialClient(jar = new CookieJar()) {
  return official(m.server, { jar, fetch: { redirect: 'manual' } })
}

async function signedUpClient(password = 'password1234') {
  const { client, jar } = officialClient()
  const email = uniqueEmail('client')
  const { result, mail } = await withMail(m, email, /^Verify your email/, () => client.signUp.email({ name: 'Client', email, password }))
  expect(result.error).toBeNull()
  return { client, jar, email, password, id: result.data?.user.id as string, verifyLink: linkIn(mail, `${m.server.base}/verify-email`) }
}

const db = () => m.server.gatehouse.ctx.db

describe('account lifecycle through the official better-auth client', () => {
  it('verifies email with verifyEmail({query}) and re-sends with sendVerificationEmail', async () => {
    const { client, email, verifyLink } = await signedUpClient()
    const token = new URL(verifyLink).searchParams.get('token') as string
    const { result: resent } = await withMail(m, email, /^Verify your email/, () =>
      client.sendVerificationEmail({ email, callbackURL: '/' }),
    )
    expect(resent.data).toEqual({ status: true })
    const verified = await client.verifyEmail({ query: { token } })
    expect(verified.error).toBeNull()
    expect(verified.data).toEqual({ status: true, user: null })
    expect((await client.getSession()).data?.user.emailVerified).toBe(true)

    // Signed in (better-auth 1.7): another address is EMAIL_MISMATCH, the own verified one EMAIL_ALREADY_VERIFIED.
    const other = await client.sendVerificationEmail({ email: uniqueEmail('ghost') })
    expect(other.error).toMatchObject({ status: 400, code: BASE_ERROR_CODES.EMAIL_MISMATCH.code, message: 'Email mismatch' })
    const again = await client.sendVerificationEmail({ email })
    expect(again.error).toMatchObject({
      status: 400,
      code: BASE_ERROR_CODES.EMAIL_ALREADY_VERIFIED.code,
      message: 'Email is already verified',
    })
    const bad = await client.verifyEmail({ query: { token: 'garbage' } })
    expect(bad.error?.status).toBe(401)
    expect(bad.error?.code).toBe(BASE_ERROR_CODES.INVALID_TOKEN.code)
  })

  it('requestPasswordReset → mail → resetPassword({newPassword, token}) → signIn', async () => {
    const { email } = await signedUpClient()
    const { client } = officialClient()
    const { result, mail } = await withMail(m, email, /^Reset your/, () =>
      client.requestPasswordReset({ email, redirectTo: `${m.server.origin}/reset` }),
    )
    expect(result.data).toEqual({ status: true, message: 'If this email exists in our system, check your email for the reset link' })
    const landing = await fetch(linkIn(mail, `${m.server.base}/reset-password/`), { redirect: 'manual' })
    const token = new URL(landing.headers.get('location') as string).searchParams.get('token') as string
    const reset = await client.resetPassword({ newPassword: 'reset via client', token })
    expect(reset.data).toEqual({ status: true })
    const again = await client.resetPassword({ newPassword: 'reset via client', token })
    expect(again.error?.status).toBe(400)
    expect(again.error?.code).toBe(BASE_ERROR_CODES.INVALID_TOKEN.code)
    expect((await client.signIn.email({ email, password: 'reset via client' })).error).toBeNull()
  })

  it('updateUser and changePassword (with revokeOtherSessions)', async () => {
    const { client, email, password, jar } = await signedUpClient()
    expect((await client.updateUser({ name: 'New Name', image: null })).data).toEqual({ status: true })
    expect((await client.getSession()).data?.user.name).toBe('New Name')
    const refused = await client.updateUser({ email: 'x@example.com' } as never)
    expect(refused.error?.code).toBe(BASE_ERROR_CODES.EMAIL_CAN_NOT_BE_UPDATED.code)

    const wrong = await client.changePassword({ currentPassword: 'wrong password', newPassword: 'changed password' })
    expect(wrong.error?.status).toBe(400)
    expect(wrong.error?.code).toBe(BASE_ERROR_CODES.INVALID_PASSWORD.code)
    const before = jar.get('better-auth.session_token')
    const changed = await client.changePassword({ currentPassword: password, newPassword: 'changed password', revokeOtherSessions: true })
    expect(changed.error).toBeNull()
    expect(changed.data?.token).toMatch(/^[A-Za-z0-9]{32}$/)
    expect(changed.data?.user.email).toBe(email)
    expect(jar.get('better-auth.session_token')).not.toBe(before)
    expect((await client.getSession()).data?.session.token).toBe(changed.data?.token)
  })

  it('changeEmail (unverified, updateEmailWithoutVerification: immediate) and listAccounts / unlinkAccount', async () => {
    const { client, id } = await signedUpClient()
    const newEmail = uniqueEmail('clientnew')
    // better-auth 1.7 changes an unverified address at once only with this option (issue 31 §5).
    m.server.gatehouse.config.update({ user: { changeEmail: { updateEmailWithoutVerification: true } } })
    try {
      const { result } = await withMail(m, newEmail, /^Verify your email/, () => client.changeEmail({ newEmail, callbackURL: '/' }))
      expect(result.data).toEqual({ status: true })
    } finally {
      m.server.gatehouse.config.update({ user: { changeEmail: { updateEmailWithoutVerification: null } } })
    }
    expect((await client.getSession()).data?.user.email).toBe(newEmail)
    const same = await client.changeEmail({ newEmail })
    expect(same.error?.status).toBe(400)
    expect(same.error?.message).toBe('Email is the same')

    const now = new Date(m.server.clock.now())
    await db()
      .insert(account)
      .values({ id: `gh${id}`, userId: id, providerId: 'github', accountId: 'gh-77', createdAt: now, updatedAt: now })
    const accounts = await client.listAccounts()
    expect(accounts.error).toBeNull()
    expect(accounts.data?.map((a) => a.providerId).sort()).toEqual(['credential', 'github'])
    // The current client unlinks by account row id.
    const unlinked = await client.unlinkAccount({ accountId: `gh${id}` })
    expect(unlinked.data).toEqual({ status: true })
    const credential = accounts.data?.find((a) => a.providerId === 'credential')
    const last = await client.unlinkAccount({ accountId: credential?.id as string })
    expect(last.error?.status).toBe(400)
    expect(last.error?.code).toBe(BASE_ERROR_CODES.FAILED_TO_UNLINK_LAST_ACCOUNT.code)
  })

  it('changeEmail for a verified user: confirmation mail, link followed in the same browser', async () => {
    const { client, jar, email, id } = await signedUpClient()
    await db().update(user).set({ emailVerified: true }).where(eq(user.id, id))
    const newEmail = uniqueEmail('confirmed')
    const { mail } = await withMail(m, email, /^Confirm your new email/, () => client.changeEmail({ newEmail, callbackURL: '/done' }))
    // The browser that holds the session opens the link.
    const res = await fetch(linkIn(mail, `${m.server.base}/verify-email`), { headers: { cookie: jar.header() }, redirect: 'manual' })
    jar.store(res)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/done')
    expect((await client.getSession({ query: { disableCookieCache: true } })).data?.user).toMatchObject({
      email: newEmail,
      emailVerified: false,
    })
  })

  it('deleteUser with the password, and through the mailed link', async () => {
    const direct = await signedUpClient()
    const wrong = await direct.client.deleteUser({ password: 'not the password' })
    expect(wrong.error?.code).toBe(BASE_ERROR_CODES.INVALID_PASSWORD.code)
    expect((await direct.client.deleteUser({ password: direct.password })).data).toEqual({ success: true, message: 'User deleted' })
    expect((await direct.client.getSession()).data).toBeNull()

    await m.server.gatehouse.config.update({ user: { deleteUser: { sendDeleteAccountVerification: true } } })
    try {
      const viaMail = await signedUpClient()
      const { result, mail } = await withMail(m, viaMail.email, /^Confirm the deletion/, () =>
        viaMail.client.deleteUser({ password: viaMail.password, callbackURL: '/bye' }),
      )
      expect(result.data).toEqual({ success: true, message: 'Verification email sent' })
      const token = new URL(linkIn(mail, `${m.server.base}/delete-user/callback`)).searchParams.get('token') as string
      expect((await viaMail.client.deleteUser({ token })).data).toEqual({ success: true, message: 'User deleted' })
      expect(await firstRow(db().select().from(user).where(eq(user.id, viaMail.id)))).toBeUndefined()
    } finally {
      await m.server.gatehouse.config.update({ user: { deleteUser: { sendDeleteAccountVerification: false } } })
    }
  })
})
