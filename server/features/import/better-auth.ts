import type { AuthContext } from '../../core/context.js'
import type { ImportOutcome } from './users.js'

/** `gatehouse import better-auth` (issue 29). */
export async function importBetterAuth(
  _ctx: AuthContext,
  _options: { from: string; dryRun: boolean; via: 'cli' | 'panel' },
): Promise<ImportOutcome | { usage: string }> {
  return { usage: 'import better-auth is not available yet' }
}
