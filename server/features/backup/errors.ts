/**
 * The backup feature's messages, spelled here only. Every refusal is one line: the CLI prints it
 * after "gatehouse: ", the panel shows it as is.
 */
export class BackupError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'BackupError'
  }
}

export const backupErrors = {
  noArchive: (file: string) => new BackupError('BACKUP_NOT_FOUND', `no such backup file: ${file}`),
  notGzip: () => new BackupError('BACKUP_FOREIGN', 'not a Gatehouse backup (not a gzip-compressed archive)'),
  notTar: () => new BackupError('BACKUP_FOREIGN', 'not a Gatehouse backup (not a tar archive)'),
  noManifest: () => new BackupError('BACKUP_FOREIGN', 'not a Gatehouse backup (no manifest.json first in the archive)'),
  badManifest: (detail: string) => new BackupError('BACKUP_FOREIGN', `not a Gatehouse backup (manifest: ${detail})`),
  truncated: () => new BackupError('BACKUP_TRUNCATED', 'backup archive is truncated (incomplete copy or interrupted download)'),
  unexpectedFile: (name: string) => new BackupError('BACKUP_TAMPERED', `backup archive holds a file its manifest does not list: ${name}`),
  missingFile: (name: string) => new BackupError('BACKUP_TRUNCATED', `backup archive lacks ${name}, which its manifest lists`),
  checksum: (name: string) => new BackupError('BACKUP_TAMPERED', `checksum mismatch for ${name}: the archive was altered or damaged`),
  integrity: (detail: string) => new BackupError('BACKUP_CORRUPT', `the database in the backup fails integrity_check: ${detail}`),
  rowCounts: (table: string) =>
    new BackupError('BACKUP_TAMPERED', `row count of ${table} differs from the manifest: the archive was altered`),
  newerSchema: (theirs: number, ours: number) =>
    new BackupError(
      'BACKUP_NEWER_SCHEMA',
      `backup has schema version ${theirs}, newer than this Gatehouse knows (${ours}); upgrade Gatehouse first`,
    ),
  schemaMismatch: () => new BackupError('BACKUP_FOREIGN', "the backup's migrations are not this Gatehouse's (foreign database)"),
  serverRunning: (pid: number) =>
    new BackupError('SERVER_RUNNING', `a Gatehouse server (pid ${pid}) is running on this data directory; stop it before restoring`),
  noDatabase: (dir: string) => new BackupError('NO_DATABASE', `no Gatehouse database in ${dir}`),
  busy: () => new BackupError('BACKUP_IN_PROGRESS', 'a backup is already being made'),
  badName: () => new BackupError('BACKUP_NOT_FOUND', 'no such backup'),
  /** The database the backup would read is not the one in use (issue 50 §8). */
  notInUse: (detail: string) => new BackupError('NOT_IN_USE', detail),
  notTheRunningOne: (dir: string, running: { pid: number; database: string }, reading: string) =>
    new BackupError(
      'NOT_IN_USE',
      `the server running on ${dir} (pid ${running.pid}) uses ${running.database}, but this backup would read ${reading}: ${running.database.startsWith('sqlite:') ? 'run it without --database-url, GATEHOUSE_DATABASE_URL or database.url' : "give it that database's URL with --database-url"}`,
    ),
  migratedAway: (dir: string, aside: string) =>
    new BackupError(
      'NOT_IN_USE',
      `the data in ${dir} was migrated to PostgreSQL (its SQLite file is now ${aside}, a stale copy): back up the database in use with --database-url postgres://…`,
    ),
  postgresExport: (detail: string) => new BackupError('NOT_AVAILABLE', detail),
  intoPostgres: (detail: string) => new BackupError('RESTORE_REFUSED', `restore into PostgreSQL: ${detail}`),
  panelRestoreOnPostgres: () =>
    new BackupError(
      'NOT_AVAILABLE',
      'this install keeps its data in PostgreSQL: restore a backup with every instance stopped, by gatehouse restore <file> --data-dir <dir> --database-url postgres://…',
    ),
}
