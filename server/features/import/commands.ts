import type { CommandDeclaration } from '../../feature.js'

/** `gatehouse import`: users from a file or a better-auth database (the CSV parser and hash libraries load only when it runs; it answers its own --help). */
export const commands: CommandDeclaration[] = [
  {
    name: 'import',
    synopsis: 'import users|better-auth [options]',
    summary: 'bring users in: gatehouse import --help',
    run: async (args, env) => (await import('./cli.js')).importCommand(args, env),
  },
]
