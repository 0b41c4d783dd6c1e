import { existsSync, readFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import type { AuthContext } from '../../core/context.js'
import type { Logger } from '../../log.js'
import { defineRoute, redirect } from '../../http/route.js'
import { providers } from '../social/providers/index.js'
import { isProviderId } from '../social/options.js'
import { listExtraProviders } from '../../extra-oauth-providers.js'
import {
  contentSecurityPolicy,
  ensureHostedAssets,
  hostedAssetsDir,
  indexTemplate,
  newNonce,
  renderIndex,
  SECURITY_HEADERS,
} from './assets.js'
import { HOSTED_PAGES_ERRORS, hostedPagesError } from './errors.js'
// Every page, each declared by its feature's pages.ts (the contract of issue 17; generated).

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
}

const enabled = (ctx: AuthContext) => ctx.config().hostedPages.enabled

/** The logger the feature's start() received (the first-request build reports through it). */
export const buildLog: { logger: Pick<Logger, 'info' | 'warn'> | null } = { logger: null }

/** The name the pages show: better-auth's `appName`, else the mail's. */
export const appNameOf = (ctx: AuthContext): string => ctx.config().appName ?? ctx.config().mail.appName

function logoOrigin(logo: string | undefined): string | null {
  if (!logo || logo.startsWith('/')) return null
  try {
    return new URL(logo).origin
  } catch {
    return null
  }
}

/** `GET /ui/api/config`: what the pages need to draw themselves, from the live configuration. */
export function publicConfig(ctx: AuthContext) {
  const c = ctx.config()
  const off = (path: string) => c.disabledPaths.includes(path)
  const password = c.emailAndPassword.enabled
  return {
    appName: appNameOf(ctx),
    logo: c.hostedPages.logo ?? null,
    color: c.hostedPages.color,
    emailAndPassword: password && !off('/sign-in/email'),
    signUp: password && !c.emailAndPassword.disableSignUp && c.signUp.mode !== 'closed' && !off('/sign-up/email'),
    username: password && !off('/sign-in/username'),
    passkey: c.passkey.enabled,
    twoFactor: c.twoFactor.enabled,
    // "Email me a link" / "Email me a code" on the sign-in page.
    magicLink: c.magicLink.enabled && !off('/sign-in/magic-link'),
    emailOTP: c.emailOTP.enabled && !off('/sign-in/email-otp') && !off('/email-otp/send-verification-otp'),
    forgotPassword: password && c.emailAndPassword.sendResetPassword && !off('/request-password-reset'),
    // The account center's Password page says whether app passwords survive a change.
    appPasswordsKeptOnPasswordChange: c.appPasswords.keepOnPasswordChange,
    changeEmail: c.user.changeEmail.enabled && !off('/change-email'),
    deleteUser: c.user.deleteUser.enabled && !off('/delete-user'),
    socialProviders: Object.entries(c.socialProviders)
      .filter(([id, options]) => isProviderId(id) && options?.enabled && options.clientId && !off('/sign-in/social'))
      .map(([id]) => ({ id, name: providers[id as keyof typeof providers].name }))
      // The providers other features add (generic OAuth), beside the built-in ones.
      .concat(off('/sign-in/social') ? [] : listExtraProviders(ctx)),
  }
}

function pageResponse(status: number, body: string, csp: string): Response {
  return new Response(body, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': csp,
      'cache-control': 'no-store',
      ...SECURITY_HEADERS,
    },
  })
}

/**
 * Every feature's hosted pages (server/features/hosted-page-list.ts, generated from their pages.ts),
 * handed in by the composition root (server/routes.ts), as the config schema and the tables are: a
 * feature imports no aggregation of the features (the floors, docs/ARCHITECTURE.md).
 */
let servedPages: ReadonlySet<string> = new Set()

export function provideHostedPages(pages: readonly string[]): void {
  servedPages = new Set(pages)
}

/** The app's page (the same index for every page; the script draws the one the address names). */
async function servePage(ctx: AuthContext, page: string): Promise<Response> {
  if (!servedPages.has(page)) throw hostedPagesError(404, 'NOT_FOUND')
  const nonce = newNonce()
  const csp = contentSecurityPolicy(nonce, {
    logoOrigin: logoOrigin(ctx.config().hostedPages.logo),
    formAnywhere: page === 'sign-out',
    // The person's picture (Profile) is any http(s) image they named.
    anyHttpsImage: page === 'consent' || page === 'account/apps' || page === 'account/profile',
  })
  const dir = hostedAssetsDir()
  const log = buildLog.logger
  await ensureHostedAssets(dir, (line) => log?.info(line))
  const template = indexTemplate(dir)
  if (!template)
    return pageResponse(
      503,
      `<!doctype html><html lang="en"><title>Not built</title><p>${HOSTED_PAGES_ERRORS.HOSTED_PAGES_NOT_BUILT}</p></html>`,
      csp,
    )
  // The build's asset paths are relative to /ui/<page>: one level deeper for /ui/account/<page>.
  const html = renderIndex(template, nonce, appNameOf(ctx))
  return pageResponse(200, page.includes('/') ? html.replaceAll('"./assets/', '"../assets/') : html, csp)
}

export const hostedPagesRoutes = [
  defineRoute({
    method: 'GET',
    path: '/ui/api/config',
    enabled,
    handler: ({ ctx, response }) => {
      response.headers.set('cache-control', 'no-store')
      return publicConfig(ctx)
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/ui',
    enabled,
    handler: ({ ctx }) => redirect(`${ctx.config().basePath}/ui/sign-in`),
  }),

  defineRoute({
    method: 'GET',
    path: '/ui/:page',
    enabled,
    handler: ({ ctx, params }) => servePage(ctx, params.page ?? ''),
  }),

  defineRoute({
    method: 'GET',
    path: '/ui/account/:page',
    enabled,
    handler: ({ ctx, params }) => servePage(ctx, `account/${params.page ?? ''}`),
  }),

  defineRoute({
    method: 'GET',
    path: '/ui/assets/:file',
    enabled,
    handler: ({ params }) => {
      const name = params.file ?? ''
      const type = TYPES[extname(name)]
      const file = join(hostedAssetsDir(), 'assets', name)
      if (!/^[A-Za-z0-9_.-]+$/.test(name) || name.startsWith('.') || !type || !existsSync(file)) throw hostedPagesError(404, 'NOT_FOUND')
      return new Response(readFileSync(file), {
        status: 200,
        headers: { 'content-type': type, 'cache-control': 'public, max-age=31536000, immutable', ...SECURITY_HEADERS },
      })
    },
  }),
]
