import { parseArgs } from 'node:util'
import { openToolContext } from '../../core/tool-context.js'
import { APIError } from '../../core/errors.js'
import { allClients, type ClientView, createClient, ID_TOKEN_ALGS, type IdTokenAlg, removeClient } from './clients.js'

const isIdTokenAlg = (value: string): value is IdTokenAlg => (ID_TOKEN_ALGS as readonly string[]).includes(value)

export const OIDC_USAGE = `Usage: gatehouse oidc client create --name NAME --redirect-uri URI [--redirect-uri URI …] [--public] [--skip-consent] [--json]
           [--post-logout-redirect-uri URI …] [--resource-server] [--id-token-alg RS256|ES256|EdDSA]
       gatehouse oidc client list [--json]
       gatehouse oidc client delete --client-id ID

Options:
  --data-dir <dir>   the data directory (default ./data, or GATEHOUSE_DATA_DIR)
  --public           a public client (no secret; PKCE required)
  --skip-consent     a first-party client: users are not asked to consent
  --post-logout-redirect-uri URI   where the app may send users after signing out (repeatable)
  --resource-server  may introspect every client's tokens (an API checking tokens); otherwise only its own
  --id-token-alg ALG the ID token's signing algorithm: RS256 (default), ES256 or EdDSA
  --json             machine-readable output (create: {"clientId", "clientSecret"}; the secret is shown this once)

Works on the data directory whether or not a server runs on it; a running server sees the change
at its next request.
`

function usage(message: string): number {
  process.stderr.write(`gatehouse: ${message}\n\n${OIDC_USAGE}`)
  return 2
}

function describe(client: ClientView): string {
  const kind = client.public ? 'public' : 'confidential'
  const flags = [
    kind,
    client.pkceRequired ? 'pkce required' : 'pkce optional',
    client.skipConsent ? 'consent skipped' : 'consent asked',
    `ID token ${client.idTokenSignedResponseAlg}`,
    ...(client.resourceServer ? ['resource server'] : []),
  ]
  return `${client.clientId}  ${client.name}  (${flags.join(', ')})\n  redirect URIs: ${client.redirectUris.join(' ')}\n`
}

/** Runs `gatehouse oidc client <create|list|delete>`; returns the exit code (0 done, 1 refused, 2 usage). */
export async function oidcCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [group, sub, ...rest] = argv
  if (group === undefined || group === '-h' || group === '--help' || group === 'help') {
    process.stdout.write(OIDC_USAGE)
    return group === undefined ? 2 : 0
  }
  if (group !== 'client') return usage(`unknown oidc command "${group}"`)
  if (sub !== 'create' && sub !== 'list' && sub !== 'delete')
    return usage(sub ? `unknown oidc client command "${sub}"` : 'missing oidc client command')
  let values: {
    'data-dir'?: string
    name?: string
    'redirect-uri'?: string[]
    'post-logout-redirect-uri'?: string[]
    public?: boolean
    'skip-consent'?: boolean
    json?: boolean
    'client-id'?: string
    'resource-server'?: boolean
    'id-token-alg'?: string
  }
  try {
    values = parseArgs({
      args: rest,
      options: {
        'data-dir': { type: 'string' },
        name: { type: 'string' },
        'redirect-uri': { type: 'string', multiple: true },
        'post-logout-redirect-uri': { type: 'string', multiple: true },
        public: { type: 'boolean' },
        'skip-consent': { type: 'boolean' },
        json: { type: 'boolean' },
        'client-id': { type: 'string' },
        'resource-server': { type: 'boolean' },
        'id-token-alg': { type: 'string' },
      },
      strict: true,
    }).values
  } catch (e) {
    return usage((e as Error).message)
  }
  if (sub === 'create' && (!values.name || !values['redirect-uri']?.length))
    return usage('create needs --name and at least one --redirect-uri')
  if (sub === 'delete' && !values['client-id']) return usage('delete needs --client-id')
  const alg = values['id-token-alg']
  if (alg !== undefined && !isIdTokenAlg(alg)) return usage(`--id-token-alg must be one of ${ID_TOKEN_ALGS.join(', ')}`)

  const opened = await openToolContext(values['data-dir'], { env, log: (line) => process.stderr.write(`${line}\n`) })
  if ('error' in opened) {
    process.stderr.write(`gatehouse: ${opened.error}\n`)
    return 2
  }
  const { ctx, close } = opened
  const by = { via: 'cli' as const }
  try {
    if (sub === 'create') {
      const { client, clientSecret } = await createClient(
        ctx,
        {
          name: values.name as string,
          redirectUris: values['redirect-uri'] ?? [],
          postLogoutRedirectUris: values['post-logout-redirect-uri'] ?? [],
          public: values.public ?? false,
          skipConsent: values['skip-consent'] ?? false,
          resourceServer: values['resource-server'] ?? false,
          ...(alg !== undefined && isIdTokenAlg(alg) ? { idTokenSignedResponseAlg: alg } : {}),
        },
        by,
      )
      if (values.json) process.stdout.write(`${JSON.stringify({ clientId: client.clientId, clientSecret })}\n`)
      else {
        process.stdout.write(describe(client))
        if (clientSecret) process.stdout.write(`  client secret: ${clientSecret}\n  (shown this once: store it now)\n`)
      }
      return 0
    }
    if (sub === 'list') {
      const clients = await allClients(ctx)
      if (values.json) process.stdout.write(`${JSON.stringify(clients)}\n`)
      else if (clients.length === 0) process.stdout.write('No OIDC clients.\n')
      else for (const client of clients) process.stdout.write(describe(client))
      return 0
    }
    await removeClient(ctx, values['client-id'] as string, by)
    if (values.json) process.stdout.write(`${JSON.stringify({ success: true })}\n`)
    else process.stdout.write(`Deleted OIDC client ${values['client-id']}\n`)
    return 0
  } catch (e) {
    if (e instanceof APIError) {
      process.stderr.write(`gatehouse: ${e.message}\n`)
      return 1
    }
    throw e
  } finally {
    await close()
  }
}
