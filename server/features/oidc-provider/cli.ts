import { type FlagOptions, type FlagValues, parseFlags, withToolContext } from '../../core/cli-command.js'
import type { ToolContext } from '../../core/tool-context.js'
import {
  allClients,
  type ClientPatch,
  type ClientView,
  changeClient,
  createClient,
  GRANT_TYPES,
  type GrantType,
  ID_TOKEN_ALGS,
  type IdTokenAlg,
  removeClient,
  rotateClientSecret,
  SUBJECT_TYPES,
  type SubjectType,
} from './clients.js'
import { registrationTokenCommand } from './registration-cli.js'
import { OIDC_USAGE } from './usage.js'

const isIdTokenAlg = (value: string): value is IdTokenAlg => (ID_TOKEN_ALGS as readonly string[]).includes(value)
const isGrantType = (value: string): value is GrantType => (GRANT_TYPES as readonly string[]).includes(value)
const isSubjectType = (value: string): value is SubjectType => (SUBJECT_TYPES as readonly string[]).includes(value)

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
    ...(client.requirePar ? ['PAR required'] : []),
    ...(client.subjectType === 'pairwise' ? ['pairwise sub'] : []),
    ...(client.registeredByToken ? [`registered by token ${client.registeredByToken}`] : []),
  ]
  const backchannel = client.backchannelLogoutUri ? `  back-channel logout: ${client.backchannelLogoutUri}\n` : ''
  return `${client.clientId}  ${client.name}  (${flags.join(', ')})\n  redirect URIs: ${client.redirectUris.join(' ')}\n  grant types: ${client.grantTypes.join(' ')}\n${backchannel}`
}

/** The flags of `gatehouse oidc client …`. */
const CLIENT_FLAGS = {
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
  'subject-type': { type: 'string' },
  'grant-type': { type: 'string', multiple: true },
  'backchannel-logout-uri': { type: 'string' },
  'require-par': { type: 'boolean' },
  'no-require-par': { type: 'boolean' },
} satisfies FlagOptions

type ClientFlags = FlagValues<typeof CLIENT_FLAGS>

/** Who changes a client here, for its audit event. */
const BY_CLI = { via: 'cli' as const }

/** The flags naming one of a fixed list, checked against it. */
interface ClientChoices {
  alg: IdTokenAlg | undefined
  subjectType: SubjectType | undefined
  grantTypes: GrantType[] | undefined
}

/** Runs `gatehouse oidc client <create|list|delete>`; returns the exit code (0 done, 1 refused, 2 usage). */
export async function oidcCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [group, sub, ...rest] = argv
  if (group === undefined || group === '-h' || group === '--help' || group === 'help') {
    process.stdout.write(OIDC_USAGE)
    return group === undefined ? 2 : 0
  }
  if (group === 'registration-token') return registrationTokenCommand(sub, rest, env, usage)
  if (group !== 'client') return usage(`unknown oidc command "${group}"`)
  if (sub !== 'create' && sub !== 'list' && sub !== 'delete' && sub !== 'update' && sub !== 'rotate-secret')
    return usage(sub ? `unknown oidc client command "${sub}"` : 'missing oidc client command')
  const parsed = parseFlags(rest, CLIENT_FLAGS, usage)
  if ('exit' in parsed) return parsed.exit
  const { values } = parsed
  if (sub === 'create' && (!values.name || !values['redirect-uri']?.length))
    return usage('create needs --name and at least one --redirect-uri')
  if ((sub === 'delete' || sub === 'update' || sub === 'rotate-secret') && !values['client-id']) return usage(`${sub} needs --client-id`)
  if (values['require-par'] && values['no-require-par']) return usage('--require-par and --no-require-par exclude each other')
  const alg = values['id-token-alg']
  if (alg !== undefined && !isIdTokenAlg(alg)) return usage(`--id-token-alg must be one of ${ID_TOKEN_ALGS.join(', ')}`)
  const subjectType = values['subject-type']
  if (subjectType !== undefined && !isSubjectType(subjectType)) return usage(`--subject-type must be one of ${SUBJECT_TYPES.join(', ')}`)
  const grants = values['grant-type']
  if (grants?.some((grant) => !isGrantType(grant))) return usage(`--grant-type must be one of ${GRANT_TYPES.join(', ')}`)
  const choices: ClientChoices = {
    alg: alg !== undefined && isIdTokenAlg(alg) ? alg : undefined,
    subjectType: subjectType !== undefined && isSubjectType(subjectType) ? subjectType : undefined,
    grantTypes: grants?.filter(isGrantType),
  }

  return withToolContext(values['data-dir'], env, async (ctx) => {
    if (sub === 'create') return createFromFlags(ctx, values, choices)
    if (sub === 'update') return updateFromFlags(ctx, values, choices)
    if (sub === 'rotate-secret') {
      const { client, clientSecret } = await rotateClientSecret(ctx, values['client-id'] as string, BY_CLI)
      if (values.json) process.stdout.write(`${JSON.stringify({ clientId: client.clientId, clientSecret })}\n`)
      else
        process.stdout.write(
          `${describe(client)}  new client secret: ${clientSecret}\n  (shown this once: store it now; the old secret no longer works)\n`,
        )
      return 0
    }
    if (sub === 'list') {
      const clients = await allClients(ctx)
      if (values.json) process.stdout.write(`${JSON.stringify(clients)}\n`)
      else if (clients.length === 0) process.stdout.write('No OIDC clients.\n')
      else for (const client of clients) process.stdout.write(describe(client))
      return 0
    }
    await removeClient(ctx, values['client-id'] as string, BY_CLI)
    if (values.json) process.stdout.write(`${JSON.stringify({ success: true })}\n`)
    else process.stdout.write(`Deleted OIDC client ${values['client-id']}\n`)
    return 0
  })
}

/** `oidc client create`: the client from the flags; its secret shown once. */
async function createFromFlags(
  ctx: ToolContext['ctx'],
  values: ClientFlags,
  { alg, subjectType, grantTypes }: ClientChoices,
): Promise<number> {
  const { client, clientSecret } = await createClient(
    ctx,
    {
      name: values.name as string,
      redirectUris: values['redirect-uri'] ?? [],
      postLogoutRedirectUris: values['post-logout-redirect-uri'] ?? [],
      public: values.public ?? false,
      skipConsent: values['skip-consent'] ?? false,
      resourceServer: values['resource-server'] ?? false,
      backchannelLogoutUri: values['backchannel-logout-uri'] ?? null,
      requirePar: values['require-par'] ?? false,
      ...(alg !== undefined ? { idTokenSignedResponseAlg: alg } : {}),
      ...(subjectType !== undefined ? { subjectType } : {}),
      ...(grantTypes ? { grantTypes } : {}),
    },
    BY_CLI,
  )
  if (values.json) process.stdout.write(`${JSON.stringify({ clientId: client.clientId, clientSecret })}\n`)
  else {
    process.stdout.write(describe(client))
    if (clientSecret) process.stdout.write(`  client secret: ${clientSecret}\n  (shown this once: store it now)\n`)
  }
  return 0
}

/** `oidc client update`: only the fields a flag names change. */
async function updateFromFlags(
  ctx: ToolContext['ctx'],
  values: ClientFlags,
  { alg, subjectType, grantTypes }: ClientChoices,
): Promise<number> {
  const patch: ClientPatch = {}
  if (values.name !== undefined) patch.name = values.name
  if (values['redirect-uri'] !== undefined) patch.redirectUris = values['redirect-uri']
  if (values['post-logout-redirect-uri'] !== undefined) patch.postLogoutRedirectUris = values['post-logout-redirect-uri']
  if (values['backchannel-logout-uri'] !== undefined) patch.backchannelLogoutUri = values['backchannel-logout-uri'] || null
  if (values['require-par'] || values['no-require-par']) patch.requirePar = values['require-par'] === true
  if (values['skip-consent'] !== undefined) patch.skipConsent = values['skip-consent']
  if (values['resource-server'] !== undefined) patch.resourceServer = values['resource-server']
  if (alg !== undefined) patch.idTokenSignedResponseAlg = alg
  if (subjectType !== undefined) patch.subjectType = subjectType
  if (grantTypes) patch.grantTypes = grantTypes
  const client = await changeClient(ctx, values['client-id'] as string, patch, BY_CLI)
  if (values.json) process.stdout.write(`${JSON.stringify(client)}\n`)
  else process.stdout.write(describe(client))
  return 0
}
