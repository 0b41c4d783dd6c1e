import type { CommandDeclaration } from '../../feature.js'
import { BACKUP_USAGE } from './usage.js'

/** `gatehouse backup` and `gatehouse restore`: one archive of the data directory, and its way back. */
export const commands: CommandDeclaration[] = [
  {
    name: 'backup',
    synopsis: 'backup [--out <file>]',
    summary: 'backup and restore: gatehouse backup --help',
    usage: BACKUP_USAGE,
    run: async (args, env) => (await import('./cli.js')).backupCommand(args, env),
  },
  {
    name: 'restore',
    synopsis: 'restore <file> --data-dir <dir> [--database-url <url>]',
    usage: BACKUP_USAGE,
    run: async (args, env) => (await import('./cli.js')).restoreCommand(args, env),
  },
]
