import { createHash } from 'node:crypto'
import type { AuthContext } from '../../core/context.js'
import { findSessionByToken, type SessionWithUser } from '../../core/sessions.js'
import { consumeVerification, createVerification } from '../../core/verification.js'
import { generateId } from '../../crypto/random.js'
import { oneTimeTokenError } from './errors.js'

/**
 * One-time tokens (better-auth's one-time-token plugin): a signed-in client asks for a short-lived
 * token that another party (a native app, a second origin) exchanges once for the same session.
 * Kept in the verification table as `one-time-token:<token or its hash>` → the session token.
 */

const identifierOf = (ctx: AuthContext, token: string): string => {
  const stored = ctx.config().oneTimeToken.storeToken === 'hashed' ? createHash('sha256').update(token).digest('base64url') : token
  return `one-time-token:${stored}`
}

export async function generateOneTimeToken(ctx: AuthContext, current: SessionWithUser): Promise<string> {
  const token = generateId(32)
  await createVerification(ctx, identifierOf(ctx, token), current.session.token, ctx.config().oneTimeToken.expiresIn * 60)
  return token
}

/**
 * Spends a token, exactly once across instances (consumeVerification deletes the row and only the
 * deleter gets it), and answers the session it was issued for. better-auth's verify returns that
 * existing session (internalAdapter.findSession) rather than creating one, so it is not a sign-in:
 * no new session, nothing for the sign-in pipeline to admit. A ban ends every session of the user,
 * so a token of a banned user finds no session. `expired` tells the route to refuse after setting
 * the cookie, in better-auth's order.
 */
export async function verifyOneTimeToken(ctx: AuthContext, token: string): Promise<{ found: SessionWithUser; expired: boolean }> {
  const row = await consumeVerification(ctx, identifierOf(ctx, token))
  if (!row) throw oneTimeTokenError(400, 'INVALID_TOKEN')
  const found = await findSessionByToken(ctx, row.value)
  if (!found) throw oneTimeTokenError(400, 'SESSION_NOT_FOUND')
  return { found, expired: found.session.expiresAt.getTime() < ctx.clock.now() }
}
