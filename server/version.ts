import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

// One level below the checkout from the sources (server/), two from the bundles (dist/server/, out/main/).
const here = dirname(fileURLToPath(import.meta.url))
const roots = [resolve(here, '..'), resolve(here, '../..')]

/** Gatehouse's version, from its package.json ('0.0.0' when it cannot be read). */
export function packageVersion(): string {
  for (const root of roots) {
    try {
      const { name, version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name?: string; version?: string }
      if (name === 'gatehouse') return version ?? '0.0.0'
    } catch {
      // Not there: the next candidate.
    }
  }
  return '0.0.0'
}
