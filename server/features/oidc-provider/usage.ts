/** `gatehouse oidc --help` (apart from cli.ts, so the CLI's start-up loads only this: commands.ts). */
export const OIDC_USAGE = `Usage: gatehouse oidc client create --name NAME --redirect-uri URI [--redirect-uri URI …] [--public] [--skip-consent] [--json]
           [--post-logout-redirect-uri URI …] [--backchannel-logout-uri URI] [--require-par] [--resource-server]
           [--id-token-alg RS256|ES256|EdDSA] [--subject-type public|pairwise] [--grant-type GRANT …]
       gatehouse oidc client update --client-id ID [--name NAME] [--redirect-uri URI …] [--post-logout-redirect-uri URI …]
           [--backchannel-logout-uri URI|""] [--require-par|--no-require-par] [--subject-type public|pairwise]
           [--grant-type GRANT …] [--json]
       gatehouse oidc client rotate-secret --client-id ID [--json]
       gatehouse oidc client list [--json]
       gatehouse oidc client delete --client-id ID
       gatehouse oidc registration-token create [--expires-in SECONDS] [--uses N] [--label TEXT] [--json]
       gatehouse oidc registration-token list [--json]
       gatehouse oidc registration-token revoke --id ID

Options:
  --data-dir <dir>   the data directory (default ./data, or GATEHOUSE_DATA_DIR)
  --public           a public client (no secret; PKCE required)
  --skip-consent     a first-party client: users are not asked to consent
  --post-logout-redirect-uri URI   where the app may send users after signing out (repeatable)
  --backchannel-logout-uri URI  where logout tokens are posted when a session that signed in to the app ends
                     (its query is kept; plain http only on this machine or the local network; "" removes it)
  --require-par      authorization requests only through pushed authorization requests (RFC 9126)
  --resource-server  may introspect every client's tokens (an API checking tokens); otherwise only its own
  --id-token-alg ALG the ID token's signing algorithm: RS256 (default), ES256 or EdDSA
  --subject-type T   the sub its tokens carry: public (default: the user id, the same at every app) or
                     pairwise (its own per person, an app cannot correlate it with another's; one redirect host)
  --grant-type G     a grant it may use (repeatable; the list replaces the earlier one): authorization_code
                     (always), refresh_token, client_credentials (confidential clients only); default all of
                     them a client of its kind may have
  --json             machine-readable output (create, rotate-secret: {"clientId", "clientSecret"}; the secret is shown this once)
  --expires-in S     registration-token create: the token expires after S seconds (default: never)
  --uses N           registration-token create: the token registers at most N clients (default: unlimited)
  --label TEXT       registration-token create: what or who the token is for (shown by list and in the panel)

update and rotate-secret keep the client's id; update keeps its secret, rotate-secret replaces it
(the old one stops working at once).

Works on the data directory whether or not a server runs on it; a running server sees the change
at its next request.
`
