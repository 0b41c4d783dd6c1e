import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

/** better-auth's fallback secret; anyone can forge cookies signed with it. */
export const DEFAULT_SECRET = 'better-auth-secret-123456789'

/**
 * The auth secret: the one given (GATEHOUSE_SECRET), else one generated on first start and kept
 * in the data directory, readable by the owner only.
 */
export function resolveSecret(given: string | undefined, dataDir: string | null): string {
  if (given) return given
  if (!dataDir) return randomBytes(32).toString('base64url')
  const file = join(dataDir, 'secret')
  if (existsSync(file)) {
    const stored = readFileSync(file, 'utf8').trim()
    if (stored) return stored
  }
  const secret = randomBytes(32).toString('base64url')
  writeFileSync(file, `${secret}\n`, { mode: 0o600 })
  chmodSync(file, 0o600)
  return secret
}
