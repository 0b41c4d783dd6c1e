import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, type ConfigStore, checkConfigFile, type ReloadOutcome } from '../config/store.js'
import type { Logger } from '../log.js'

/**
 * SIGHUP (and `gatehouse reload`, which sends it): the running server re-reads the data directory's
 * config.json (issue 50 §10). What can change at run time applies as a panel save would (listeners,
 * audit `via: reload`, shared with other instances on PostgreSQL); a key read only at start keeps its
 * running value and is logged as needing a restart; an invalid file changes nothing and is logged.
 */
export function reloadConfig(store: ConfigStore, logger: Logger): ReloadOutcome | null {
  try {
    const outcome = store.reloadFile()
    if (outcome.applied.length > 0) logger.info(`config reload: applied ${outcome.applied.join(', ')}`)
    else if (outcome.needsRestart.length === 0) logger.info('config reload: config.json has no change')
    for (const key of outcome.needsRestart)
      logger.warn(
        `config reload: ${key} changed in config.json but is read at start-up only: restart to apply it (the old value stays in effect)`,
      )
    return outcome
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    logger.error(`config reload refused, nothing changed: ${error.message}`)
    return null
  }
}

export const RELOAD_USAGE = `Usage: gatehouse reload [--data-dir <dir>]

Tells the server running on the data directory (its gatehouse.pid) to re-read DATA_DIR/config.json
(SIGHUP): what can change at run time applies at once, as a panel save would; a key read only at
start-up (basePath, database, secondaryStorage) is logged as needing a restart. The file is checked
first: an invalid one is reported here and nothing is sent. Flags, GATEHOUSE_* variables and the
--config file are read at start-up only.
`

/** `gatehouse reload`: checks config.json, then sends SIGHUP to the server whose pid file is in the data directory. */
export function reloadCommand(args: string[], env: NodeJS.ProcessEnv): number {
  let dataDir = env.GATEHOUSE_DATA_DIR ?? './data'
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    if (arg === '--data-dir' && args[i + 1] !== undefined) dataDir = args[++i] as string
    else if (arg.startsWith('--data-dir=')) dataDir = arg.slice('--data-dir='.length)
    else {
      process.stderr.write(`gatehouse reload: unexpected argument "${arg}"\n\n${RELOAD_USAGE}`)
      return 2
    }
  }
  const file = join(dataDir, 'config.json')
  if (existsSync(file)) checkConfigFile(file)
  const pidFile = join(dataDir, 'gatehouse.pid')
  const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : Number.NaN
  if (!Number.isInteger(pid) || pid <= 0) {
    process.stderr.write(`gatehouse reload: no server runs on ${dataDir} (no gatehouse.pid there)\n`)
    return 1
  }
  try {
    process.kill(pid, 'SIGHUP')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    process.stderr.write(
      code === 'ESRCH'
        ? `gatehouse reload: no server runs on ${dataDir} (gatehouse.pid names process ${pid}, which is gone)\n`
        : `gatehouse reload: cannot signal process ${pid} (${code ?? 'error'})\n`,
    )
    return 1
  }
  process.stdout.write(`gatehouse reload: sent SIGHUP to the server (pid ${pid}); its log says what applied and what needs a restart\n`)
  return 0
}
