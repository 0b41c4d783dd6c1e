import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '../..')

/**
 * The hosted end-user pages built by vite.hosted.config.ts exactly as `npm run build` does, into
 * `outDir` (a fresh temporary folder unless given; the caller removes it). Its path is what a test
 * server takes as GATEHOUSE_HOSTED_ASSETS.
 */
export async function buildHostedPages(outDir = mkdtempSync(join(tmpdir(), 'gatehouse-hosted-'))): Promise<string> {
  const { build } = await import('vite')
  await build({ configFile: join(root, 'vite.hosted.config.ts'), logLevel: 'silent', build: { outDir, emptyOutDir: true } })
  return outDir
}
