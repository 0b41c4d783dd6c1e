import { signUpRefusal } from '../../core/sign-up-gate.js'
import { z } from 'zod'
import { recordAudit } from '../../core/audit.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { APIError } from '../../core/errors.js'
import type { UserRow } from '../../core/sessions.js'
import type { SignInAttempt } from '../../core/sign-in.js'
import { findUserByEmail, insertUser, normalizeEmail, proveEmailOwnership } from '../../core/users.js'
import { randomString } from '../../crypto/random.js'
import { MAGIC_LINK_ERRORS, type MagicLinkErrorKey } from './errors.js'
import { magicLinkEmail, setUpLinkEmail } from './mail.js'
import { findMagicLink, spendMagicLink, storeMagicLink } from './store.js'

/** A refusal of GET /magic-link/verify: the route turns it into a redirect with `?error=`. */
export class MagicLinkError extends Error {
  constructor(
    readonly code: MagicLinkErrorKey | string,
    readonly description?: string,
  ) {
    super(code in MAGIC_LINK_ERRORS ? MAGIC_LINK_ERRORS[code as MagicLinkErrorKey] : code)
  }
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'

const recordSchema = z.object({ type: z.literal('magic-link'), email: z.email(), name: z.string().optional() }).strict()

export interface LinkRequest {
  email: string
  name?: string
  callbackURL?: string
  newUserCallbackURL?: string
  errorCallbackURL?: string
}

/**
 * POST /sign-in/magic-link: a 32-letter token stored as `magic-link:{token}` for `expiresIn`
 * seconds, and the link `{baseURL}/magic-link/verify?token=…&callbackURL=…` mailed to the address,
 * known or not (sign-up happens when the link is followed, unless `disableSignUp`).
 */
export async function sendMagicLink(ctx: AuthContext, input: LinkRequest, meta: RequestMeta): Promise<void> {
  const { expiresIn } = ctx.config().magicLink
  const url = await newMagicLink(ctx, { email: input.email, name: input.name }, input.callbackURL || '/', expiresIn)
  if (input.newUserCallbackURL) url.searchParams.set('newUserCallbackURL', input.newUserCallbackURL)
  if (input.errorCallbackURL) url.searchParams.set('errorCallbackURL', input.errorCallbackURL)
  const known = await findUserByEmail(ctx, input.email)
  await ctx.mailer.send(magicLinkEmail(ctx.config().mail.appName, { email: input.email, name: known?.name }, url.toString(), expiresIn))
  await recordAudit(ctx, { type: 'user.magic-link-requested', targetUserId: known?.id ?? null, meta })
}

/** A stored token (`magic-link:{token}`, spent at its first use) and its verify link. */
async function newMagicLink(ctx: AuthContext, to: { email: string; name?: string }, callbackURL: string, expiresIn: number): Promise<URL> {
  const token = randomString(32, LETTERS)
  await storeMagicLink(ctx, token, JSON.stringify({ type: 'magic-link', email: to.email, name: to.name }), expiresIn)
  const url = new URL(`${ctx.baseURL}/magic-link/verify`)
  url.searchParams.set('token', token)
  url.searchParams.set('callbackURL', callbackURL)
  return url
}

/**
 * The set-up link an administrator mails (admin's users.sendSetUpLink): a magic link for the
 * person's address, single-use and valid `expiresIn` seconds, that lands on `callbackURL` (the
 * hosted two-factor page as an enrolment) once GET /magic-link/verify signed them in, through the
 * same sign-in table as their own link (a second factor they have is asked for). Needs magic-link
 * sign-in on: the verify route is its.
 */
export async function mailSetUpLink(ctx: AuthContext, target: UserRow, callbackURL: string, expiresIn: number): Promise<void> {
  const url = await newMagicLink(ctx, { email: target.email }, callbackURL, expiresIn)
  await ctx.mailer.send(setUpLinkEmail(ctx.config().mail.appName, target, url.toString(), expiresIn))
}

/**
 * GET /magic-link/verify, the identification half: the token's record (unspent, unexpired), the
 * user of its address (created, verified, when unknown and sign-up is allowed; an unverified one is
 * promoted: the link proves the mailbox). The token is spent by the attempt's `commit`, in the
 * session's transaction.
 */
export async function identifyByMagicLink(
  ctx: AuthContext,
  token: string,
  meta: RequestMeta,
): Promise<{ attempt: SignInAttempt; isNewUser: boolean }> {
  const row = await findMagicLink(ctx, token)
  const parsed = row ? parseRecord(row.value) : null
  if (!row || !parsed) throw new MagicLinkError('INVALID_TOKEN')
  const email = normalizeEmail(parsed.email)
  let found: UserRow | undefined = await findUserByEmail(ctx, email)
  let isNewUser = false
  if (!found) {
    if (ctx.config().magicLink.disableSignUp) throw new MagicLinkError('new_user_signup_disabled')
    const refusal = await signUpRefusal(ctx, email)
    if (refusal) throw new MagicLinkError(refusal === 'closed' ? 'new_user_signup_disabled' : 'invitation_required')
    try {
      found = await insertUser(ctx, { email, name: parsed.name || '', emailVerified: true }, null)
      isNewUser = true
      await recordAudit(ctx, { type: 'user.sign-up', actorUserId: found.id, detail: { method: 'magic-link' }, meta })
    } catch (e) {
      // A parallel use of the same link created the user first: only one of them spends the link.
      found = await findUserByEmail(ctx, email)
      if (!found) {
        if (e instanceof APIError) throw new MagicLinkError(e.code, e.message)
        throw e
      }
    }
  } else {
    found = await proveEmailOwnership(ctx, found)
  }
  const attempt: SignInAttempt = {
    user: found,
    method: 'magic-link',
    secondFactor: 'due',
    commit: async () => {
      if (!(await spendMagicLink(ctx, row))) throw new APIError(400, 'INVALID_TOKEN', MAGIC_LINK_ERRORS.INVALID_TOKEN)
    },
  }
  return { attempt, isNewUser }
}

function parseRecord(value: string): z.output<typeof recordSchema> | null {
  try {
    const parsed = recordSchema.safeParse(JSON.parse(value))
    return parsed.success ? parsed.data : null
  } catch {
    return null
  }
}
