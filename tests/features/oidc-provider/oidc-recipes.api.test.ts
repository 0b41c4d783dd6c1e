import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RECIPES } from '../../../renderer/src/features/oidc-provider/recipes.js'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { configSchema } from '../../../server/config-schema.js'
import { groupNames, groupsRule } from '../../../server/features/groups/names.js'
import { createClient } from '../../../server/features/oidc-provider/clients.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * The panel's ready recipes, checked against what each application documents (the redirect URI it
 * sends; read 2026-11 from the pages in `docs`), against Gatehouse's own client validation (every
 * documented URI, custom schemes included, is accepted as written) and against the claims the
 * provider announces (every claim a recipe tells the application to read exists).
 */
const DOCUMENTED_REDIRECTS: Record<string, { uris: string[]; source: string }> = {
  // Grafana generic OAuth: "<grafana URL>/login/generic_oauth".
  grafana: {
    uris: ['APP/login/generic_oauth'],
    source: 'grafana.com/docs/grafana/latest/setup-grafana/configure-security/configure-authentication/generic-oauth/',
  },
  // Gitea/Forgejo OAuth2 sources: "<ROOT_URL>/user/oauth2/<authentication name>/callback".
  gitea: { uris: ['APP/user/oauth2/Gatehouse/callback'], source: 'docs.gitea.com/usage/authentication' },
  // Nextcloud user_oidc: "<nextcloud>/apps/user_oidc/code" (index.php/ before apps/ without pretty URLs).
  nextcloud: { uris: ['APP/apps/user_oidc/code'], source: 'github.com/nextcloud/user_oidc' },
  // Immich: app.immich:///oauth-callback (mobile), /auth/login (web), /user-settings (linking).
  immich: { uris: ['app.immich:///oauth-callback', 'APP/auth/login', 'APP/user-settings'], source: 'docs.immich.app/administration/oauth' },
  // Portainer custom OAuth: the redirect URL is Portainer's own URL.
  portainer: { uris: ['APP/'], source: 'docs.portainer.io/admin/settings/authentication/oauth' },
  // Proxmox VE OpenID realm: the redirect URL is the web UI's origin (location.origin), no path.
  proxmox: { uris: ['APP'], source: 'pve.proxmox.com/wiki/User_Management#user-realms-openid' },
  // Jellyfin SSO plugin: "<jellyfin>/sso/OID/redirect/<provider name>".
  jellyfin: { uris: ['APP/sso/OID/redirect/Gatehouse'], source: 'github.com/9p4/jellyfin-plugin-sso' },
}

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ config: { oidcProvider: { enabled: true } } })
})
afterAll(async () => {
  await server?.close()
})

describe('OIDC client recipes', () => {
  it('give every application its documented redirect URI pattern', () => {
    expect(RECIPES.map((r) => r.id).sort()).toEqual(Object.keys(DOCUMENTED_REDIRECTS).sort())
    for (const recipe of RECIPES) expect(recipe.redirectUris, recipe.id).toEqual(DOCUMENTED_REDIRECTS[recipe.id]?.uris)
  })

  it('are accepted as clients exactly as written, custom schemes included', async () => {
    for (const recipe of RECIPES) {
      const app = recipe.id === 'proxmox' ? 'https://pve.lan:8006' : `https://${recipe.id}.lan`
      const redirectUris = recipe.redirectUris.map((uri) => uri.replace('APP', app))
      const { client, clientSecret } = await createClient(server.gatehouse.ctx, { name: recipe.name, redirectUris }, { via: 'cli' })
      expect(client.redirectUris, recipe.id).toEqual(redirectUris)
      expect(clientSecret, recipe.id).toMatch(/^.{32,}$/)
    }
  })

  it('only tell applications to read claims and endpoints the provider announces', async () => {
    const discovery = (await (await fetch(`${server.base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>
    const claims = discovery.claims_supported as string[]
    for (const claim of ['sub', 'email', 'email_verified', 'name', 'picture', 'preferred_username', 'groups'])
      expect(claims).toContain(claim)
    let claimsRead = 0
    let urlsRead = 0
    for (const recipe of RECIPES) {
      const pasted = recipe.paste.replaceAll('{issuer}', server.base)
      for (const [url] of pasted.matchAll(/http:\/\/127\.0\.0\.1:\d+\/api\/auth\/[^\s"]+/g)) {
        expect(Object.values(discovery).includes(url) || url.endsWith('/.well-known/openid-configuration'), `${recipe.id}: ${url}`).toBe(
          true,
        )
        urlsRead++
      }
      for (const [, claim] of pasted.matchAll(
        /(?:(?:login|name|email|groups)_attribute_path|claim|identifier|mapping-[a-z-]+)[^=:\n]*[=:]\s*"?([a-z_]+)/gi,
      )) {
        expect(claims, `${recipe.id} reads ${claim}`).toContain(claim)
        claimsRead++
      }
    }
    // The patterns above do find what the recipes name (Grafana's four paths, Nextcloud's mappings, …).
    expect(claimsRead).toBeGreaterThanOrEqual(12)
    expect(urlsRead).toBeGreaterThanOrEqual(8)
  })

  it('name as admin groups only what the group rule sends an administrator (recipes, docs/SSO.md and the README)', () => {
    const rule = groupsRule(configSchema.parse({}))
    // Who each recipe means to make an application admin: a Gatehouse administrator, or (docs/SSO.md's
    // Grafana example) an admin member of the organization acme.
    const administrator = groupNames({ role: 'admin', memberships: [], teams: [] }, rule)
    const acmeAdmin = groupNames({ role: 'user', memberships: [{ slug: 'acme', role: 'admin' }], teams: [] }, rule)
    const adminGroupsOf = (text: string): string[] => [
      ...[...text.matchAll(/contains\(groups\[\*\], '([^']+)'\)/g)].map((m) => m[1] as string),
      ...[...text.matchAll(/Admin roles: (\S+)/g)].map((m) => m[1] as string),
    ]
    let checked = 0
    for (const recipe of RECIPES) {
      for (const name of adminGroupsOf(recipe.paste)) {
        expect(administrator, `${recipe.id} makes "${name}" an admin`).toContain(name)
        checked++
      }
    }
    for (const file of ['docs/SSO.md', 'README.md']) {
      const docs = readFileSync(join(import.meta.dirname, '../../..', file), 'utf8')
      for (const name of adminGroupsOf(docs)) {
        expect([...administrator, ...acmeAdmin], `${file} makes "${name}" an admin`).toContain(name)
        checked++
      }
    }
    // Grafana's and Jellyfin's recipes, and the Grafana examples of docs/SSO.md and the README.
    expect(checked).toBeGreaterThanOrEqual(4)
  })
})
