/**
 * Who is told that sessions ended (signed out, revoked, expired, a ban, a deletion): the features'
 * `sessionsEnded` hooks, attached per context by features-of.ts. Its own module because core's
 * sessions module, which calls it, is named by the Feature type (calling featuresOf from there
 * would be an import cycle). Tool contexts (the CLI) attach nothing.
 */
type Listener = (ctx: object, sessionIds: readonly string[]) => Promise<void>

const listeners = new WeakMap<object, Listener>()

export function setSessionEndListener(ctx: object, listener: Listener): void {
  listeners.set(ctx, listener)
}

/** The sessions of these ids ended; joins the caller's transaction (listeners only run queries). */
export async function sessionsEnded(ctx: object, sessionIds: readonly string[]): Promise<void> {
  if (sessionIds.length === 0) return
  await listeners.get(ctx)?.(ctx, sessionIds)
}
