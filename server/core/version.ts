import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

// Two levels below the checkout, from the sources (server/core/) and from the bundle (dist/server/) alike.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** Gatehouse's version, from its package.json ('0.0.0' when it cannot be read). */
export function packageVersion(): string {
  try {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: string }
    return version ?? '0.0.0'
  } catch {
    return '0.0.0'
  }
}
