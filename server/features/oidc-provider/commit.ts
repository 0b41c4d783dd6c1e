import { recordAudit } from '../../core/audit.js'
import type { AuthContext } from '../../core/context.js'
import type { WriteBatch } from './batch.js'
import { applyModelWrites } from './store.js'

/**
 * Group commit of token requests. A request's batch (its model writes and audit entries, see
 * batch.ts) waits for the end of the current turn of the event loop; every batch handed over in
 * that turn (requests that arrived together) is committed in one transaction, one fsync for all,
 * and each request answers only once that commit is done. When the shared commit fails (a refresh
 * token consumed twice in the group, any write refused), nothing of it is kept and the batches
 * are committed again one by one, in order, so that only the failing request fails.
 */

interface Waiting {
  batch: WriteBatch
  resolve: () => void
  reject: (error: unknown) => void
}

const queues = new WeakMap<AuthContext, Waiting[]>()

async function apply(ctx: AuthContext, batch: WriteBatch): Promise<void> {
  await applyModelWrites(ctx, batch.writes)
  for (const event of batch.audits) await recordAudit(ctx, event)
}

async function flush(ctx: AuthContext, group: Waiting[]): Promise<void> {
  if (group.length > 1) {
    try {
      await ctx.storage.transaction(async () => {
        for (const waiting of group) await apply(ctx, waiting.batch)
      })
      for (const waiting of group) waiting.resolve()
      return
    } catch {
      // One by one below: the failing batch gets its own error.
    }
  }
  for (const waiting of group) {
    try {
      await ctx.storage.transaction(() => apply(ctx, waiting.batch))
      waiting.resolve()
    } catch (error) {
      waiting.reject(error)
    }
  }
}

/** Commits the batch with the others of this turn; resolves once it is committed (durable). */
export function commitWithOthers(ctx: AuthContext, batch: WriteBatch): Promise<void> {
  return new Promise((resolve, reject) => {
    let queue = queues.get(ctx)
    if (!queue) {
      const group: Waiting[] = []
      queue = group
      queues.set(ctx, group)
      setImmediate(() => {
        queues.delete(ctx)
        void flush(ctx, group)
      })
    }
    queue.push({ batch, resolve, reject })
  })
}
