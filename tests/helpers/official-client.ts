import type { BetterAuthClientPlugin } from 'better-auth/client'
import { createAuthClient } from 'better-auth/client'
import { CookieJar, jarFetch } from './http.js'

/**
 * better-auth's official client (createAuthClient) talking to a test server as a browser app on
 * its origin: the given plugins, cookies kept in `jar` (tests/helpers/http.ts jarFetch), fetch
 * options such as `redirect: 'manual'` or `onResponse`. Generic over the plugins, so the client's
 * plugin methods (`client.signIn.magicLink`, `client.admin.listUsers`, …) type-check.
 */
export function officialClient<const Plugins extends BetterAuthClientPlugin[] = []>(
  server: { origin: string },
  options: { jar?: CookieJar; plugins?: Plugins; fetch?: Parameters<typeof jarFetch>[2] } = {},
) {
  const jar = options.jar ?? new CookieJar()
  const client = createAuthClient({
    baseURL: server.origin,
    plugins: (options.plugins ?? []) as Plugins,
    fetchOptions: { customFetchImpl: jarFetch(server.origin, jar, options.fetch) },
  })
  return { client, jar }
}
