/** `gatehouse backup --help` and `gatehouse restore --help` (apart from cli.ts, so the CLI's start-up loads only this: commands.ts). */
export const BACKUP_USAGE = `Usage: gatehouse backup [--out <file>] [--data-dir <dir>] [--database-url <url>]
       gatehouse restore <file> --data-dir <dir> [--database-url <url>]

backup   an online, consistent snapshot of the database in use (the server may keep running and
         writing), with the stored config and the secret, as one .tar.gz with a manifest
         (default: <data dir>/backups/gatehouse-backup-<time>.tar.gz); on PostgreSQL
         (--database-url, or database.url in the config) the logical export of every table
restore  verifies the archive (checksums, integrity_check, schema version; older schemas are
         migrated) before it replaces anything, then restores into the data directory's SQLite
         file, or with --database-url into that PostgreSQL database (every instance stopped);
         refused while a server runs on the directory. The replaced files are kept in
         <data dir>/replaced-<time>/ until the restored data has started once.

Options:
  --data-dir <dir>   GATEHOUSE_DATA_DIR   data directory (default ./data)
  --out <file>                            where to write the backup
  -h, --help                              this help
`
