import { fail } from '../../core/errors.js'
import { signUpRefusal } from '../../core/sign-up-gate.js'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import { findUserByEmail } from '../../core/user-store.js'
import {
  assertValidEmail,
  insertUser,
  readAdditionalFields,
  readFeatureUserFields,
  unsavedUser,
  userAlreadyExists,
} from '../../core/users.js'
import { hashPassword } from '../../crypto/password.js'
import { emailPasswordError } from './errors.js'
import { existingAccountEmail } from './mail.js'
import { assertPasswordPolicy } from './password-policy.js'
import { sendVerificationEmailIfEnabled } from './verification.js'

export interface SignUpInput {
  name: string
  email: string
  password: string
  image?: string | null
  rememberMe?: boolean
  /** Everything else the client sent: candidates for additional fields and feature columns (username). */
  extra: Record<string, unknown>
}

export interface SignUpResult {
  user: UserRow
  /** autoSignIn: the sign-in the route finishes through the pipeline (server/http/sign-in.ts). */
  signIn: SignInAttempt | null
}

/** POST /sign-up/email. */
export async function signUpEmail(ctx: AuthContext, input: SignUpInput, meta: RequestMeta): Promise<SignUpResult> {
  const conf = ctx.config().emailAndPassword
  if (!conf.enabled || conf.disableSignUp) throw emailPasswordError(400, 'EMAIL_PASSWORD_SIGN_UP_DISABLED')
  if (ctx.config().signUp.mode === 'closed') throw emailPasswordError(400, 'EMAIL_PASSWORD_SIGN_UP_DISABLED')
  assertValidEmail(input.email)
  // signUp.mode "invitation": refused before anything tells whether the address has an account.
  if ((await signUpRefusal(ctx, input.email)) !== null) {
    await recordAudit(ctx, { type: 'user.sign-up', outcome: 'failure', detail: { reason: 'SIGN_UP_INVITATION_REQUIRED' }, meta })
    throw fail(403, 'SIGN_UP_INVITATION_REQUIRED', 'SIGN_UP_INVITATION_REQUIRED', 'email')
  }
  await assertPasswordPolicy(ctx, input.password, [input.email, input.name])
  const additionalFields = readAdditionalFields(ctx, input.extra, 'create')
  const featureFields = await readFeatureUserFields(ctx, input.extra, { mode: 'create' })
  const newUser = { ...input, ...featureFields, additionalFields }
  const existing = await findUserByEmail(ctx, input.email)
  if (existing && conf.requireEmailVerification) {
    // Enumeration protection (as current better-auth): the same answer, and the same hashing
    // work, as a real sign-up; the owner of the address is told by mail instead.
    await hashPassword(input.password)
    await ctx.mailer.send(existingAccountEmail(ctx.config().mail.appName, existing))
    await recordAudit(ctx, {
      type: 'user.sign-up',
      outcome: 'failure',
      targetUserId: existing.id,
      detail: { reason: 'USER_ALREADY_EXISTS', concealed: true },
      meta,
    })
    return { user: unsavedUser(ctx, newUser), signIn: null }
  }
  if (existing) {
    await recordAudit(ctx, { type: 'user.sign-up', outcome: 'failure', detail: { reason: 'USER_ALREADY_EXISTS' }, meta })
    throw userAlreadyExists()
  }
  const hash = await hashPassword(input.password)
  const created = await insertUser(ctx, newUser, hash)
  await recordAudit(ctx, { type: 'user.sign-up', actorUserId: created.id, meta })
  if (ctx.config().emailVerification.sendOnSignUp || conf.requireEmailVerification) {
    const callbackURL = typeof input.extra.callbackURL === 'string' ? input.extra.callbackURL : undefined
    await sendVerificationEmailIfEnabled(ctx, created, callbackURL)
  }
  if (!conf.autoSignIn || conf.requireEmailVerification) return { user: created, signIn: null }
  return {
    user: created,
    signIn: { user: created, method: 'email', secondFactor: 'due', rememberMe: input.rememberMe, detail: { via: 'sign-up' } },
  }
}
