import type { AuthContext } from '../../core/context.js'
import { addAllowedCounts, listAllowedCounts } from './store.js'

const HOUR_MS = 3_600_000

/** Allowed answers not yet written, per server: `app\nhour` → count. */
const pending = new WeakMap<AuthContext, Map<string, number>>()

/** Counts one allowed answer in memory (no I/O: a busy proxy asks on every request). */
export function countAllowed(ctx: AuthContext, app: string): void {
  let counts = pending.get(ctx)
  if (!counts) {
    counts = new Map()
    pending.set(ctx, counts)
  }
  const key = `${app}\n${Math.floor(ctx.clock.now() / HOUR_MS) * HOUR_MS}`
  counts.set(key, (counts.get(key) ?? 0) + 1)
}

/** Writes the counts gathered so far (one upsert per app and hour), then forgets them. */
export async function flushAllowedCounts(ctx: AuthContext): Promise<void> {
  const counts = pending.get(ctx)
  if (!counts || counts.size === 0) return
  pending.set(ctx, new Map())
  const rows = [...counts].map(([key, allowed]) => {
    const [app = '', hour = '0'] = key.split('\n')
    return { app, hour: Number(hour), allowed }
  })
  try {
    await addAllowedCounts(ctx, rows)
  } catch (error) {
    // Not lost: merged back for the next flush.
    const again = pending.get(ctx) ?? new Map<string, number>()
    for (const [key, n] of counts) again.set(key, (again.get(key) ?? 0) + n)
    pending.set(ctx, again)
    throw error
  }
}

/** Allowed answers per app and hour over the last `hours` hours, including what is not yet written. */
export async function allowedCounts(ctx: AuthContext, hours: number): Promise<{ app: string; hour: string; allowed: number }[]> {
  await flushAllowedCounts(ctx)
  const from = Math.floor(ctx.clock.now() / HOUR_MS) * HOUR_MS - (hours - 1) * HOUR_MS
  const rows = await listAllowedCounts(ctx, from)
  return rows.map((r) => ({ app: r.app, hour: new Date(r.hour).toISOString(), allowed: r.allowed }))
}

/** Allowed answers per app over the last `hours` hours, busiest first (the panel's overview). */
export async function allowedPerApp(ctx: AuthContext, hours: number): Promise<{ app: string; allowed: number }[]> {
  const totals = new Map<string, number>()
  for (const row of await allowedCounts(ctx, hours)) totals.set(row.app, (totals.get(row.app) ?? 0) + row.allowed)
  return [...totals].map(([app, allowed]) => ({ app, allowed })).sort((a, b) => b.allowed - a.allowed || a.app.localeCompare(b.app))
}
