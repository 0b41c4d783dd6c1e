import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RequestMeta } from '../../../server/core/context.js'
import { APIError } from '../../../server/core/errors.js'
import { insertUser } from '../../../server/core/users.js'
import { changeEmail, changePassword, updateUser } from '../../../server/features/account/rules.js'
import { resetPassword } from '../../../server/features/email-password/password-reset.js'
import { signInEmail } from '../../../server/features/email-password/sign-in.js'
import { openSignInSession } from '../../../server/core/sign-in.js'
import { signUpEmail } from '../../../server/features/email-password/sign-up.js'
import { HttpClient, uniqueEmail } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Errors name the form field they concern (APIError.field, carried to the panel as
 * PanelFailure.field), while the HTTP body stays better-auth's `{code, message}`. Also: a clash
 * on a unique user column answers with the owning feature's error (users.ts userWriteError).
 */

const meta: RequestMeta = { ipAddress: null, userAgent: null }
let server: TestServer
const ctx = () => server.gatehouse.ctx

beforeAll(async () => {
  server = await startTestServer({ config: { user: { changeEmail: { enabled: true } } } })
})
afterAll(() => server.close())

/** The APIError a call fails with, as `{status, code, message, field}`. */
async function refusal(call: () => Promise<unknown>) {
  try {
    await call()
  } catch (e) {
    if (!(e instanceof APIError)) throw e
    return { status: e.status, code: e.code, message: e.message, field: e.field }
  }
  throw new Error('expected an APIError')
}

const signUpInput = (overrides: Partial<{ email: string; password: string; extra: Record<string, unknown> }> = {}) => ({
  name: 'Ada',
  email: overrides.email ?? uniqueEmail('fields'),
  password: overrides.password ?? 'correct horse battery',
  extra: overrides.extra ?? {},
})

async function signedIn(extra: Record<string, unknown> = {}) {
  const input = signUpInput({ extra })
  await signUpEmail(ctx(), input, meta)
  return openSignInSession(ctx(), await signInEmail(ctx(), { email: input.email, password: input.password }, meta), meta)
}

describe('errors name their field', () => {
  it('sign-up: email format, password length, taken address and taken username', async () => {
    expect(await refusal(() => signUpEmail(ctx(), signUpInput({ email: 'not-an-email' }), meta))).toEqual({
      status: 400,
      code: 'INVALID_EMAIL',
      message: 'Invalid email',
      field: 'email',
    })
    expect(await refusal(() => signUpEmail(ctx(), signUpInput({ password: 'short' }), meta))).toEqual({
      status: 400,
      code: 'PASSWORD_TOO_SHORT',
      message: 'Password too short',
      field: 'password',
    })
    const taken = signUpInput({ extra: { username: 'field_holder' } })
    await signUpEmail(ctx(), taken, meta)
    expect(await refusal(() => signUpEmail(ctx(), signUpInput({ email: taken.email }), meta))).toEqual({
      status: 422,
      code: 'USER_ALREADY_EXISTS',
      message: 'User already exists',
      field: 'email',
    })
    expect(await refusal(() => signUpEmail(ctx(), signUpInput({ extra: { username: 'Field_Holder' } }), meta))).toEqual({
      status: 422,
      code: 'USERNAME_IS_ALREADY_TAKEN',
      message: 'username is already taken. please try another.',
      field: 'username',
    })
  })

  it('change-password, change-email and update-user name the field they refuse', async () => {
    const current = await signedIn()
    expect(
      await refusal(() => changePassword(ctx(), current, { currentPassword: 'wrong password!', newPassword: 'another good one' }, meta)),
    ).toEqual({ status: 400, code: 'INVALID_PASSWORD', message: 'Invalid password', field: 'currentPassword' })
    expect(
      await refusal(() => changePassword(ctx(), current, { currentPassword: 'correct horse battery', newPassword: 'x' }, meta)),
    ).toEqual({
      status: 400,
      code: 'PASSWORD_TOO_SHORT',
      message: 'Password too short',
      field: 'newPassword',
    })
    expect(await refusal(() => changeEmail(ctx(), current, { newEmail: current.user.email }, meta))).toEqual({
      status: 400,
      code: 'EMAIL_IS_THE_SAME',
      message: 'Email is the same',
      field: 'newEmail',
    })
    expect(await refusal(() => updateUser(ctx(), current, { username: 'ab' }, meta))).toEqual({
      status: 422,
      code: 'USERNAME_TOO_SHORT',
      message: 'username is too short',
      field: 'username',
    })
    expect(await refusal(() => updateUser(ctx(), current, { displayUsername: 42 }, meta))).toEqual({
      status: 400,
      code: 'VALIDATION_ERROR',
      message: '[body.displayUsername] Invalid input: expected string',
      field: 'displayUsername',
    })
  })

  it('reset-password names the token and the new password', async () => {
    expect(await refusal(() => resetPassword(ctx(), { token: undefined, newPassword: 'long enough pw' }, meta))).toMatchObject({
      code: 'INVALID_TOKEN',
      field: 'token',
    })
    expect(await refusal(() => resetPassword(ctx(), { token: 'nope', newPassword: 'x' }, meta))).toMatchObject({
      code: 'PASSWORD_TOO_SHORT',
      field: 'newPassword',
    })
  })

  it('keeps the field off the HTTP body', async () => {
    const res = await new HttpClient(server.base).post('/sign-up/email', { name: 'Ada', email: uniqueEmail('wire'), password: 'short' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ code: 'PASSWORD_TOO_SHORT', message: 'Password too short' })
  })
})

describe('unique clashes on user columns', () => {
  it('a write that loses the race for a username or an address gets the owning feature error', async () => {
    const holder = await signedIn({ username: 'race_winner' })
    // Straight to the insert, past the availability check: the database's unique index decides.
    expect(await refusal(() => insertUser(ctx(), { name: 'B', email: uniqueEmail('race'), username: 'race_winner' }, null))).toEqual({
      status: 422,
      code: 'USERNAME_IS_ALREADY_TAKEN',
      message: 'username is already taken. please try another.',
      field: 'username',
    })
    expect(await refusal(() => insertUser(ctx(), { name: 'C', email: holder.user.email }, null))).toEqual({
      status: 422,
      code: 'USER_ALREADY_EXISTS',
      message: 'User already exists',
      field: 'email',
    })
  })
})
