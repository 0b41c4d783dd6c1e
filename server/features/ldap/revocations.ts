import type { AuthContext } from '../../core/context.js'

/**
 * Bindings made with the main password end with the steps that evict an intruder (issue 48 §5): a
 * password change, reset or admin set-password, a ban, "revoke all sessions" and deletion all call
 * the `credentialsRevoked` hook, which moves the person's revocation mark past every binding made
 * so far; the connection then answers its next operation with 49 (bind again). App-password
 * bindings are re-checked against the app password itself (appPasswords.keepOnPasswordChange may
 * keep it). A sequence, not the clock: a revocation and a bind in the same millisecond stay ordered.
 * Keyed by the storage (a transaction's context shares it). Per process: another instance's connections see a ban or a deletion through the directory.
 */
const marks = new WeakMap<object, { sequence: number; revoked: Map<string, number> }>()

function of(ctx: AuthContext) {
  let state = marks.get(ctx.storage)
  if (!state) {
    state = { sequence: 0, revoked: new Map() }
    marks.set(ctx.storage, state)
  }
  return state
}

/** The mark a new binding carries. */
export function bindingMark(ctx: AuthContext): number {
  return of(ctx).sequence
}

/** The credentialsRevoked hook: every binding of the person made before now ends. */
export function revokeBindings(ctx: AuthContext, userId: string): void {
  const state = of(ctx)
  state.revoked.set(userId, ++state.sequence)
}

/** Whether a binding of `userId` made at `mark` still holds. */
export function bindingHolds(ctx: AuthContext, userId: string, mark: number): boolean {
  return (of(ctx).revoked.get(userId) ?? 0) <= mark
}
