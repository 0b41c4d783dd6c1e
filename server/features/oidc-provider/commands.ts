import type { CommandDeclaration } from '../../feature.js'
import { OIDC_USAGE } from './usage.js'

/** `gatehouse oidc`: the provider's clients and registration tokens on the data directory. */
export const commands: CommandDeclaration[] = [
  {
    name: 'oidc',
    synopsis: 'oidc client create|list|delete',
    summary: 'OpenID Connect clients: gatehouse oidc --help',
    usage: OIDC_USAGE,
    run: async (args, env) => (await import('./cli.js')).oidcCommand(args, env),
  },
]
