import type { CommandDeclaration } from '../../feature.js'
import { JWT_USAGE } from './usage.js'

/** `gatehouse jwt`: the JWT signing keys on the data directory. */
export const commands: CommandDeclaration[] = [
  {
    name: 'jwt',
    synopsis: 'jwt rotate|keys [options]',
    summary: 'JWT signing keys: gatehouse jwt --help',
    usage: JWT_USAGE,
    run: async (args, env) => (await import('./cli.js')).jwtCommand(args, env),
  },
]
