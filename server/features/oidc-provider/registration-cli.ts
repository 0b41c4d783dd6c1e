import { parseFlags, withToolContext } from '../../core/cli-command.js'
import { createRegistrationToken, type RegistrationTokenView, registrationTokens, revokeRegistration } from './registration.js'

const iso = (ms: number | null): string => (ms === null ? 'never' : new Date(ms).toISOString())

function describe(token: RegistrationTokenView): string {
  const state = token.revokedAt ? 'revoked' : token.active ? 'active' : 'spent or expired'
  const uses = token.usesLeft === null ? 'unlimited uses' : `${token.usesLeft} use(s) left`
  const label = token.label ? `  "${token.label}"` : ''
  return `${token.id}${label}  ${state}  (${uses}, used ${token.used}, expires ${iso(token.expiresAt)}, created ${iso(token.createdAt)}${token.createdBy ? ` by ${token.createdBy}` : ''})\n`
}

/** `gatehouse oidc registration-token <create|list|revoke>`: initial access tokens for dynamic client registration. */
export async function registrationTokenCommand(
  sub: string | undefined,
  rest: string[],
  env: NodeJS.ProcessEnv,
  usage: (message: string) => number,
): Promise<number> {
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke')
    return usage(sub ? `unknown oidc registration-token command "${sub}"` : 'missing oidc registration-token command')
  const parsed = parseFlags(
    rest,
    {
      'data-dir': { type: 'string' },
      'expires-in': { type: 'string' },
      uses: { type: 'string' },
      label: { type: 'string' },
      json: { type: 'boolean' },
      id: { type: 'string' },
    },
    usage,
  )
  if ('exit' in parsed) return parsed.exit
  const { values } = parsed
  const positive = (value: string | undefined): number | null | undefined => {
    if (value === undefined) return null
    return /^[1-9]\d{0,9}$/.test(value) ? Number(value) : undefined
  }
  const expiresIn = positive(values['expires-in'])
  const uses = positive(values.uses)
  if (expiresIn === undefined) return usage('--expires-in must be a positive number of seconds')
  if (uses === undefined) return usage('--uses must be a positive number')
  if (sub === 'revoke' && !values.id) return usage('revoke needs --id')
  return withToolContext(values['data-dir'], env, async (ctx) => {
    const by = { via: 'cli' as const }
    if (sub === 'create') {
      const { token, registrationToken } = await createRegistrationToken(ctx, { expiresIn, uses, label: values.label ?? null }, by)
      if (values.json) process.stdout.write(`${JSON.stringify({ ...registrationToken, token })}\n`)
      else
        process.stdout.write(
          `${describe(registrationToken)}  initial access token: ${token}\n  (shown this once: give it to the application that registers itself at ${ctx.baseURL}/oauth2/register)\n`,
        )
      return 0
    }
    if (sub === 'list') {
      const tokens = await registrationTokens(ctx)
      if (values.json) process.stdout.write(`${JSON.stringify(tokens)}\n`)
      else if (tokens.length === 0) process.stdout.write('No registration tokens.\n')
      else for (const token of tokens) process.stdout.write(describe(token))
      return 0
    }
    await revokeRegistration(ctx, values.id as string, by)
    if (values.json) process.stdout.write(`${JSON.stringify({ success: true })}\n`)
    else process.stdout.write(`Revoked registration token ${values.id}\n`)
    return 0
  })
}
