import './schema.js' // the database tables (core + features), handed down to db/ as it loads: first, before any module that queries
import { parseArgs } from 'node:util'
import { resolve } from 'node:path'
import { ConfigError, deepMerge, readJsonFile } from './config/store.js'
import type { StartupSources } from './config/startup.js'
import { USER_USAGE, userCommand } from './cli-user.js'
import type { CommandDeclaration } from './feature.js'
import { featureCommands } from './features/commands.js'
import { RELOAD_USAGE, reloadCommand, reloadConfig } from './core/config-reload.js'
import { openGatehouse } from './gatehouse.js'
import { type NetworkOverrides, readNetworkSettings, registerNetworkRuntime, resolveNetwork } from './features/network/index.js'
import { type EngineFlags, engineEnvironment, takeEngineFlags } from './db/engine.js'
import { DEFAULT_PANEL_PORT } from './panel/http.js'
import { startBrowserPanel } from './panel/index.js'
import { packageVersion } from './version.js'
import { NewerDatabaseError } from './db/release.js'
import { storageFaultLine } from './core/outage.js'

/** The command line's own tool commands, beside the features' (server/features/commands.ts): one dispatch for both. */
const CORE_COMMANDS: CommandDeclaration[] = [
  {
    name: 'user',
    synopsis: 'user create|set-role [options]',
    summary: 'user administration: gatehouse user --help',
    usage: USER_USAGE,
    run: (args, env) => userCommand(args, env),
  },
  {
    name: 'reload',
    synopsis: 'reload [--data-dir <dir>]',
    summary: 'the running server re-reads config.json: SIGHUP',
    usage: RELOAD_USAGE,
    run: async (args, env) => reloadCommand(args, env),
  },
]

/** `gatehouse --help`'s lines besides the tool commands: the version, and migrate (it takes the engine flags itself). */
const OTHER_COMMAND_LINES = [
  { synopsis: '--version', summary: "this release's version: docs/RELEASING.md" },
  { synopsis: 'migrate --to postgres://…', summary: "copy the data directory's SQLite into an empty PostgreSQL" },
]

const commandLine = ({ synopsis, summary }: { synopsis: string; summary?: string }) =>
  `       gatehouse ${summary ? `${synopsis.padEnd(32)} (${summary})` : synopsis}\n`

const USAGE = `Usage: gatehouse serve [options]
${[...OTHER_COMMAND_LINES, ...CORE_COMMANDS, ...featureCommands].map(commandLine).join('')}
Options (each also an environment variable):
  --port <n>               GATEHOUSE_PORT             API port (default 4280)
  --host <addr>            GATEHOUSE_HOST             API address (default 127.0.0.1)
  --data-dir <dir>         GATEHOUSE_DATA_DIR         data directory (default ./data)
  --base-url <url>         GATEHOUSE_BASE_URL         public URL (default http://HOST:PORT)
  --trusted-origins <list> GATEHOUSE_TRUSTED_ORIGINS  comma-separated trusted origins
  --smtp-url <url>         GATEHOUSE_SMTP_URL         SMTP server for outgoing mail
  --rate-limit <on|off>    GATEHOUSE_RATE_LIMIT       request rate limiting (default on)
  --config <file>          GATEHOUSE_CONFIG           JSON file merged over the stored config
  --panel-port <n>         GATEHOUSE_PANEL_PORT       control panel port on 127.0.0.1 (default 4281)
  --database-url <url>     GATEHOUSE_DATABASE_URL     postgres://… shared database (default: SQLite in the data dir)
  --database-pool-size <n> GATEHOUSE_DATABASE_POOL_SIZE  PostgreSQL connections per instance (default 10)
  --redis-url <url>        GATEHOUSE_REDIS_URL        Redis/Valkey secondary storage (rate limits, caches)
  --metrics-address <a>    GATEHOUSE_METRICS_ADDRESS  serve Prometheus metrics on host:port (e.g. 127.0.0.1:9959)
  --log-format <f>         GATEHOUSE_LOG_FORMAT       text (default) or json (one object per line)
  --log-level <l>          GATEHOUSE_LOG_LEVEL        debug, info (default), warn or error
                           GATEHOUSE_SECRET           auth secret (default: generated in the data dir)
  -h, --help                                          this help

--database-url, --database-pool-size and --redis-url are accepted by every command.
Without --host/--port/--base-url, the API listens where the control panel's Network section
saved it (DATA_DIR/network.json), else on 127.0.0.1:4280.
`

export interface ServeOptions {
  port: number
  host: string
  dataDir: string
  baseURL?: string
  secret?: string
  smtpUrl?: string
  overrides: Record<string, unknown>
  /** Where each part of `overrides` came from, as the panel names it (config/startup.ts). */
  configSources: StartupSources
  /** The browser control panel's port (always bound to 127.0.0.1). */
  panelPort: number
  /** Host, port and base URL given as flags or variables: they win over the Network panel's settings. */
  network: NetworkOverrides
}

type ServeFlags = ReturnType<typeof parseArgs>['values']
/** A flag's value, else its GATEHOUSE_* variable's (an empty variable counts as unset). */
type ReadFlag = (name: string, variable: string) => string | undefined
/** Which gave a flag's value: `--name`, the variable's name, or undefined when neither is set. */
type SourceOf = (name: string, variable: string) => string | undefined

function parseServeFlags(argv: string[]): ServeFlags {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: false,
      strict: true,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'data-dir': { type: 'string' },
        'base-url': { type: 'string' },
        'trusted-origins': { type: 'string' },
        'smtp-url': { type: 'string' },
        'rate-limit': { type: 'string' },
        config: { type: 'string' },
        'panel-port': { type: 'string' },
        'metrics-address': { type: 'string' },
        'log-format': { type: 'string' },
        'log-level': { type: 'string' },
      },
    }).values
  } catch (e) {
    throw new ConfigError((e as Error).message)
  }
}

function portNumber(option: string, text: string): number {
  const port = Number(text)
  if (!/^\d+$/.test(text) || port > 65535) throw new ConfigError(`${option}: "${text}" is not a port number (0-65535)`)
  return port
}

function checkBaseURL(baseURL: string): void {
  let url: URL | null = null
  try {
    url = new URL(baseURL)
  } catch {}
  if (!url || !/^https?:$/.test(url.protocol)) throw new ConfigError(`base-url: "${baseURL}" is not an http(s) URL`)
}

/** The config file, then the flags that stand for config settings merged over it, each part with its source. */
function configOverrides(flag: ReadFlag, sourceOf: SourceOf): { overrides: Record<string, unknown>; sources: StartupSources } {
  let overrides: Record<string, unknown> = {}
  const sources: Array<{ path: string; source: string }> = []
  const from = (path: string, name: string, variable: string) => sources.push({ path, source: sourceOf(name, variable) ?? `--${name}` })
  const configFile = flag('config', 'GATEHOUSE_CONFIG')
  if (configFile) {
    overrides = readJsonFile(resolve(configFile), 'config file')
    const named = sourceOf('config', 'GATEHOUSE_CONFIG')
    sources.push({ path: '', source: named === '--config' ? `--config ${configFile}` : `the config file ${configFile} (GATEHOUSE_CONFIG)` })
  }

  const origins = flag('trusted-origins', 'GATEHOUSE_TRUSTED_ORIGINS')
  if (origins !== undefined) {
    overrides = deepMerge(overrides, { trustedOrigins: origins.split(',').map((s) => s.trim()) })
    from('trustedOrigins', 'trusted-origins', 'GATEHOUSE_TRUSTED_ORIGINS')
  }

  const rateLimit = flag('rate-limit', 'GATEHOUSE_RATE_LIMIT')
  if (rateLimit !== undefined) {
    if (rateLimit !== 'on' && rateLimit !== 'off') throw new ConfigError(`rate-limit: "${rateLimit}" must be on or off`)
    overrides = deepMerge(overrides, { rateLimit: { enabled: rateLimit === 'on' } })
    from('rateLimit.enabled', 'rate-limit', 'GATEHOUSE_RATE_LIMIT')
  }

  // Naming an address switches the metrics listener on; the config validates the address.
  const metricsAddress = flag('metrics-address', 'GATEHOUSE_METRICS_ADDRESS')
  if (metricsAddress !== undefined) {
    overrides = deepMerge(overrides, { metrics: { enabled: true, address: metricsAddress } })
    from('metrics', 'metrics-address', 'GATEHOUSE_METRICS_ADDRESS')
  }
  const logFormat = flag('log-format', 'GATEHOUSE_LOG_FORMAT')
  if (logFormat !== undefined) {
    if (logFormat !== 'text' && logFormat !== 'json') throw new ConfigError(`log-format: "${logFormat}" must be text or json`)
    overrides = deepMerge(overrides, { log: { format: logFormat } })
    from('log.format', 'log-format', 'GATEHOUSE_LOG_FORMAT')
  }
  const logLevel = flag('log-level', 'GATEHOUSE_LOG_LEVEL')
  if (logLevel !== undefined) {
    if (!['debug', 'info', 'warn', 'error'].includes(logLevel))
      throw new ConfigError(`log-level: "${logLevel}" must be debug, info, warn or error`)
    overrides = deepMerge(overrides, { log: { level: logLevel } })
    from('log.level', 'log-level', 'GATEHOUSE_LOG_LEVEL')
  }
  return { overrides, sources }
}

/** Reads flags, then GATEHOUSE_* variables, then defaults. Throws ConfigError on a bad value. */
export function readServeOptions(argv: string[], env: NodeJS.ProcessEnv): ServeOptions {
  const values = parseServeFlags(argv)
  const flag: ReadFlag = (name, variable) => {
    const value = values[name]
    return typeof value === 'string' ? value : env[variable] || undefined
  }
  const sourceOf: SourceOf = (name, variable) => (typeof values[name] === 'string' ? `--${name}` : env[variable] ? variable : undefined)

  const port = portNumber('port', flag('port', 'GATEHOUSE_PORT') ?? '4280')
  // An ephemeral API port (--port 0, tests) gets an ephemeral panel port unless one is named.
  const panelPort = portNumber('panel-port', flag('panel-port', 'GATEHOUSE_PANEL_PORT') ?? String(port === 0 ? 0 : DEFAULT_PANEL_PORT))
  const baseURL = flag('base-url', 'GATEHOUSE_BASE_URL')
  if (baseURL !== undefined) checkBaseURL(baseURL)
  const { overrides, sources: configSources } = configOverrides(flag, sourceOf)

  const host = flag('host', 'GATEHOUSE_HOST') ?? '127.0.0.1'
  const network: NetworkOverrides = {}
  const portSource = sourceOf('port', 'GATEHOUSE_PORT')
  const hostSource = sourceOf('host', 'GATEHOUSE_HOST')
  const baseSource = sourceOf('base-url', 'GATEHOUSE_BASE_URL')
  if (portSource) network.port = { value: port, source: portSource }
  if (hostSource) network.host = { value: host, source: hostSource }
  if (baseSource && baseURL) network.baseURL = { value: baseURL, source: baseSource }

  return {
    port,
    host,
    dataDir: resolve(flag('data-dir', 'GATEHOUSE_DATA_DIR') ?? './data'),
    baseURL,
    secret: env.GATEHOUSE_SECRET || undefined,
    smtpUrl: flag('smtp-url', 'GATEHOUSE_SMTP_URL'),
    overrides,
    configSources,
    panelPort,
    network,
  }
}

/** A start-up failure the operator fixes: one line, exit code 1. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'StartupError'
  }
}

/** The one-line message for a listener that could not bind (a taken port, a missing address). */
export function listenFailure(error: unknown, host: string, port: number, flags: { port: string; host: string }): string | null {
  const code = (error as NodeJS.ErrnoException)?.code
  if (code === 'EADDRINUSE') {
    return `port ${port} on ${host} is already in use (another Gatehouse or another program); choose another port with ${flags.port}`
  }
  if (code === 'EACCES') return `port ${port} on ${host} needs privileges this user lacks; choose a port above 1023 with ${flags.port}`
  if (code === 'EADDRNOTAVAIL') return `address ${host} is not an address of this machine; choose another with ${flags.host}`
  return null
}

async function serveCommand(argv: string[], engine: EngineFlags): Promise<void> {
  const options = readServeOptions(argv, process.env)
  // Flags and variables win over the Network panel's stored settings (data/network.json).
  const network = resolveNetwork(readNetworkSettings(options.dataDir), options.network)
  const gatehouse = await openGatehouse({
    engine,
    dataDir: options.dataDir,
    port: network.port,
    host: network.host,
    baseURL: network.baseURL,
    secret: options.secret,
    smtpUrl: options.smtpUrl,
    config: options.overrides,
    configSources: options.configSources,
  })
  let url: string
  try {
    url = await gatehouse.listen()
  } catch (error) {
    const message = listenFailure(error, network.host, network.port, {
      port: '--port <n> (or GATEHOUSE_PORT)',
      host: '--host <address> (or GATEHOUSE_HOST)',
    })
    await gatehouse.close()
    if (message) throw new StartupError(message)
    throw error
  }
  registerNetworkRuntime(gatehouse, { dataDir: options.dataDir, overrides: options.network })
  const log = gatehouse.logger
  log.info(`Gatehouse API listening on ${url}`)
  log.info(`Data directory: ${options.dataDir}`)
  if (gatehouse.database.dialect === 'postgres') log.info(`Database: ${gatehouse.database.location}`)
  const panel = await startBrowserPanel(gatehouse, options.panelPort).catch((e: NodeJS.ErrnoException) => {
    log.warn(`control panel not started (${e.code ?? e.message}); choose another --panel-port`)
    return null
  })
  if (panel) {
    // Administrators sign in with their own accounts (issue 31 §1); the token link is the way in
    // when none can: the first administrator of a fresh install, or a lost one.
    log.info(`Control panel: ${panel.localOrigin}/  (administrators sign in with their Gatehouse account or a passkey)`)
    log.info(
      `Panel recovery link: ${panel.loginURL}  (to create the first administrator or when none can sign in; valid until the server stops; keep it private)`,
    )
  }
  // Without SMTP, said once here (with where to read the messages) rather than at the first message.
  gatehouse.ctx.mailer.announceDevelopmentMail?.(panel ? `${panel.localOrigin}/#/email` : null)
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info(`${signal} received, shutting down`)
    try {
      await panel?.close()
      await gatehouse.close()
    } catch (error) {
      // Said, and the exit code says so; gatehouse.close() has removed the pid file either way.
      log.error('shutdown did not complete cleanly', error)
      process.exit(1)
    }
    process.exit(0)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  // A hand edit of config.json applies without a restart (gatehouse reload sends this).
  process.on('SIGHUP', () => {
    if (!stopping) reloadConfig(gatehouse.config, log)
  })
}

/** Each tool command by name: its usage is printed for `--help`/`-h` anywhere on its line (every subcommand). */
const TOOL_COMMANDS = new Map([...CORE_COMMANDS, ...featureCommands].map((command) => [command.name, command]))

/** Whether `-h`/`--help` is among the arguments (before a `--`). */
function asksHelp(args: string[]): boolean {
  const end = args.indexOf('--')
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '-h' || a === '--help')
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv
  if (command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(USAGE)
    return 0
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    process.stdout.write(`gatehouse ${packageVersion()}\n`)
    return 0
  }
  const tool = command === undefined ? undefined : TOOL_COMMANDS.get(command)
  if (tool?.usage && asksHelp(args)) {
    process.stdout.write(tool.usage)
    return 0
  }
  try {
    // The engine flags of every command (server/db/engine.ts), taken out before each command parses its own.
    const { argv: rest, flags: engine } = takeEngineFlags(args, process.env)
    // Loaded on demand: node-postgres and the pg schema stay out of every other command's start-up.
    if (command === 'migrate') return await (await import('./db/pg/migrate-command.js')).migrateCommand(rest, engine)
    // The tool commands read the engine from their environment (openToolContext), flags included.
    const env = engineEnvironment(process.env, engine)
    if (command === undefined || command === 'serve') {
      if (rest.includes('-h') || rest.includes('--help')) {
        process.stdout.write(USAGE)
        return 0
      }
      await serveCommand(rest, engine)
      return -1
    }
    // A feature's command loads its code on demand (commands.ts): one command's libraries stay out of another's start-up.
    if (tool) return await tool.run(rest, env)
    process.stderr.write(`gatehouse: unknown command "${command}"\n\n${USAGE}`)
    return 2
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`gatehouse: ${e.message}\n`)
      return 2
    }
    // A read-only data directory or database, a full disk: the path and the cause, no stack.
    const fault = storageFaultLine(e)
    if (fault) {
      process.stderr.write(`gatehouse: ${fault}\n`)
      return 2
    }
    if (e instanceof StartupError || e instanceof NewerDatabaseError) {
      process.stderr.write(`gatehouse: ${e.message}\n`)
      return 1
    }
    throw e
  }
}
