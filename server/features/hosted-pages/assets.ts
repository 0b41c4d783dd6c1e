import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The project root: the nearest folder above this module holding package.json (this module runs
 * from server/features/hosted-pages in a checkout, from dist/server/main.mjs after the server
 * build, and from out/main/index.js inside the desktop app: different depths).
 */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return dir
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
}

const root = projectRoot()

/**
 * Where the built pages live: out/hosted under the project root, or
 * GATEHOUSE_HOSTED_ASSETS (tests build into a temporary folder; packagers may point elsewhere).
 */
export const hostedAssetsDir = (): string => resolve(process.env.GATEHOUSE_HOSTED_ASSETS ?? join(root, 'out', 'hosted'))

let building: Promise<boolean> | null = null

/**
 * `npm start` runs without a front-end build step: the first page request builds the pages with
 * Vite (a dev dependency of a source checkout) when their files are missing, once at a time, as
 * the browser panel does (server/panel/build.ts). False when that is impossible (an install without
 * Vite or without the sources): the pages then answer 503 with the command to run.
 */
export function ensureHostedAssets(dir: string, log: (line: string) => void): Promise<boolean> {
  if (existsSync(join(dir, 'index.html'))) return Promise.resolve(true)
  building ??= (async () => {
    const config = join(root, 'vite.hosted.config.ts')
    if (!existsSync(config)) return false
    try {
      // A computed specifier: bundlers (the server and Electron builds) leave Vite out.
      const specifier = 'vite'
      const vite = (await import(/* @vite-ignore */ specifier)) as typeof import('vite')
      log('Building the hosted sign-in pages (first request only)...')
      await vite.build({ configFile: config, logLevel: 'warn', build: { outDir: dir, emptyOutDir: true } })
      return existsSync(join(dir, 'index.html'))
    } catch (e) {
      log(`Could not build the hosted pages: ${(e as Error).message}. Run npm run build.`)
      return false
    }
  })().finally(() => {
    building = null
  })
  return building
}

let cached: { file: string; mtimeMs: number; text: string } | null = null

/** index.html of the build, read again only when the file changed. */
export function indexTemplate(dir: string): string | null {
  const file = join(dir, 'index.html')
  if (!existsSync(file)) return null
  const { mtimeMs } = statSync(file)
  if (cached?.file !== file || cached.mtimeMs !== mtimeMs) cached = { file, mtimeMs, text: readFileSync(file, 'utf8') }
  return cached.text
}

export const newNonce = (): string => randomBytes(18).toString('base64')

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string)

/** The page: the build's index.html with the request's style nonce (its meta tag and its pre-paint style) and the application's name as title. */
export function renderIndex(template: string, nonce: string, title: string): string {
  return template.replaceAll('__GATEHOUSE_STYLE_NONCE__', nonce).replace(/<title>[^<]*<\/title>/, `<title>${escapeHtml(title)}</title>`)
}

/**
 * The pages' Content-Security-Policy. Scripts: only the build's own files ('self'; no inline
 * script, no eval). Styles: the build's CSS file ('self') plus the `<style>` elements Mantine
 * injects at run time (its CSS variables), admitted by a nonce minted per response and handed to
 * Mantine through a meta tag (`getStyleNonce`); no 'unsafe-inline'. Inline `style` attributes set by
 * React go through the CSSOM, which CSP does not govern. Images: 'self', data: (Mantine's inline
 * SVG icons) and the configured logo's origin; on the consent page also any https: image (the
 * OIDC client's logo, registered by an administrator, may live anywhere). form-action 'self', except on the sign-out page whose
 * form posts to the OIDC end-session endpoint, which then redirects to the application's
 * post-logout URI (any origin or app scheme): Chromium applies form-action to that redirect too.
 */
export function contentSecurityPolicy(
  nonce: string,
  options: { logoOrigin?: string | null; formAnywhere?: boolean; anyHttpsImage?: boolean },
): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    `img-src 'self' data:${options.logoOrigin ? ` ${options.logoOrigin}` : ''}${options.anyHttpsImage ? ' https:' : ''}`,
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "object-src 'none'",
    "frame-ancestors 'none'",
    ...(options.formAnywhere ? [] : ["form-action 'self'"]),
  ].join('; ')
}

/** Headers every hosted page and asset carries besides the CSP. */
export const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
}
