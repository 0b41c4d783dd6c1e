import type { AuthContext } from '../../core/context.js'
import { deleteSessionsByTokens, findSessionByToken, type SessionWithUser } from '../../core/sessions.js'

/**
 * Several accounts in one browser (better-auth's multi-session plugin). Besides the session cookie
 * of the active account, the browser keeps one signed cookie per signed-in account,
 * `<session cookie name>_multi-<token in lower case>`, whose value is that session's token.
 */

/** Sessions of these tokens that exist and have not expired, in the given order. */
export async function liveSessions(ctx: AuthContext, tokens: readonly string[]): Promise<SessionWithUser[]> {
  const now = ctx.clock.now()
  const found: SessionWithUser[] = []
  for (const token of tokens) {
    const data = await findSessionByToken(ctx, token)
    if (data && data.session.expiresAt.getTime() > now) found.push(data)
  }
  return found
}

/** One session per user, the first one seen (list-device-sessions). */
export function onePerUser(sessions: readonly SessionWithUser[]): SessionWithUser[] {
  const seen = new Set<string>()
  return sessions.filter((s) => {
    if (seen.has(s.user.id)) return false
    seen.add(s.user.id)
    return true
  })
}

/**
 * A new sign-in of `userId` replaces the browser's earlier sessions of that same user: of the
 * device tokens given, those of the user are ended. Returns the tokens ended.
 */
export async function endEarlierSessionsOf(ctx: AuthContext, userId: string, tokens: readonly string[]): Promise<Set<string>> {
  const ended = new Set<string>()
  for (const token of tokens) {
    if ((await findSessionByToken(ctx, token))?.user.id === userId) ended.add(token)
  }
  await deleteSessionsByTokens(ctx, [...ended])
  return ended
}

export const endSessions = (ctx: AuthContext, tokens: readonly string[]): Promise<number> => deleteSessionsByTokens(ctx, tokens)
