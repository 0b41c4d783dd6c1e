/**
 * Ready recipes for self-hosted applications: the redirect URI each one uses (APP = the
 * application's own public URL) and what to paste into it. `{issuer}` is Gatehouse's issuer
 * (origin + base path), `{clientId}` / `{clientSecret}` the client's. Checked against each
 * application's documentation (see docs/SSO.md for the sources).
 */
export interface Recipe {
  id: string
  name: string
  /** Redirect URI patterns; APP stands for the application's URL. */
  redirectUris: string[]
  /** Public client (no secret, PKCE): mobile apps. */
  public?: boolean
  /** The application sends no PKCE (confidential client allowed without it). */
  noPkce?: boolean
  /** What to paste on the application's side. */
  paste: string
  docs: string
}

export const RECIPES: Recipe[] = [
  {
    id: 'grafana',
    name: 'Grafana',
    redirectUris: ['APP/login/generic_oauth'],
    paste: `[auth.generic_oauth]
enabled = true
name = Gatehouse
client_id = {clientId}
client_secret = {clientSecret}
# Grafana gets a refresh token at every sign-in; it outlives the Gatehouse session once the person
# has allowed offline access on a consent page (remembered until revoked; see docs/SSO.md).
scopes = openid email profile groups offline_access
auth_url = {issuer}/oauth2/authorize
token_url = {issuer}/oauth2/token
api_url = {issuer}/oauth2/userinfo
use_pkce = true
use_refresh_token = true
login_attribute_path = preferred_username
name_attribute_path = name
email_attribute_path = email
groups_attribute_path = groups
role_attribute_path = contains(groups[*], 'admin') && 'Admin' || 'Viewer'`,
    docs: 'https://grafana.com/docs/grafana/latest/setup-grafana/configure-security/configure-authentication/generic-oauth/',
  },
  {
    id: 'gitea',
    name: 'Gitea / Forgejo',
    redirectUris: ['APP/user/oauth2/Gatehouse/callback'],
    noPkce: true,
    paste: `Site administration → Authentication sources → Add:
  Authentication type: OAuth2
  Authentication name: Gatehouse   (must match the name in the redirect URI)
  OAuth2 provider: OpenID Connect
  Client ID (key): {clientId}
  Client secret: {clientSecret}
  OpenID Connect auto discovery URL: {issuer}/.well-known/openid-configuration
  Additional scopes: email profile groups
  Claim name providing group names: groups`,
    docs: 'https://docs.gitea.com/usage/authentication#oauth2-provider',
  },
  {
    id: 'nextcloud',
    name: 'Nextcloud (user_oidc)',
    redirectUris: ['APP/apps/user_oidc/code'],
    paste: `occ user_oidc:provider Gatehouse \\
  --clientid="{clientId}" --clientsecret="{clientSecret}" \\
  --discoveryuri="{issuer}/.well-known/openid-configuration" \\
  --scope="openid email profile groups" \\
  --mapping-uid=sub --mapping-display-name=name --mapping-email=email --mapping-groups=groups`,
    docs: 'https://github.com/nextcloud/user_oidc',
  },
  {
    id: 'immich',
    name: 'Immich',
    redirectUris: ['app.immich:///oauth-callback', 'APP/auth/login', 'APP/user-settings'],
    paste: `Administration → Settings → Authentication → OAuth:
  Issuer URL: {issuer}
  Client ID: {clientId}
  Client secret: {clientSecret}
  Scope: openid email profile
  Signing algorithm: RS256
  Storage label claim: preferred_username
  Mobile redirect URI override: off (app.immich:///oauth-callback is registered)`,
    docs: 'https://immich.app/docs/administration/oauth',
  },
  {
    id: 'portainer',
    name: 'Portainer',
    redirectUris: ['APP/'],
    noPkce: true,
    paste: `Settings → Authentication → OAuth → Custom:
  Client ID: {clientId}
  Client secret: {clientSecret}
  Authorization URL: {issuer}/oauth2/authorize
  Access token URL: {issuer}/oauth2/token
  Resource URL: {issuer}/oauth2/userinfo
  Redirect URL: APP/
  Logout URL: {issuer}/oauth2/endsession
  User identifier: preferred_username
  Scopes: openid email profile groups`,
    docs: 'https://docs.portainer.io/admin/settings/authentication/oauth',
  },
  {
    id: 'proxmox',
    name: 'Proxmox VE',
    redirectUris: ['APP'],
    paste: `Datacenter → Permissions → Realms → Add → OpenID Connect Server:
  Issuer URL: {issuer}
  Realm: gatehouse
  Client ID: {clientId}
  Client Key: {clientSecret}
  Username claim: preferred_username
  Scopes: openid email profile
  Autocreate users: on
(APP is https://pve.example.com:8006, without a path)`,
    docs: 'https://pve.proxmox.com/wiki/User_Management#user-realms-openid',
  },
  {
    id: 'jellyfin',
    name: 'Jellyfin (SSO plugin)',
    redirectUris: ['APP/sso/OID/redirect/Gatehouse'],
    paste: `Dashboard → Plugins → SSO-Auth → add an OpenID provider named Gatehouse:
  OID Endpoint: {issuer}
  OpenID Client ID: {clientId}
  OID Secret: {clientSecret}
  Enabled: on
  Roles claim: groups
  Admin roles: admin`,
    docs: 'https://github.com/9p4/jellyfin-plugin-sso',
  },
]

/** A recipe's text with the issuer and the client's values filled in. */
export function fillRecipe(text: string, values: { issuer: string; clientId?: string; clientSecret?: string | null }): string {
  return text
    .replaceAll('{issuer}', values.issuer)
    .replaceAll('{clientId}', values.clientId ?? '<client id>')
    .replaceAll('{clientSecret}', values.clientSecret ?? '<client secret>')
}
