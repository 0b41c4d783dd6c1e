/**
 * The server's log (issue 32, docs/OBSERVABILITY.md). `log.format` text keeps the lines Gatehouse
 * always printed (info on stdout, `warning: …` and errors on stderr); json writes one object per
 * line on stdout: `{time, level, msg, requestId?, route?, method?, status?, durationMs?, code?,
 * error?: {message, stack}}`. Lines below `log.level` are dropped; both are read at each line, so
 * a config change applies at once.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

/** What a line about one request carries. Never a user id, email, token or raw path. */
export interface LogFields {
  requestId?: string
  /** The route template (or `(unmatched)`), as the metrics label it. */
  route?: string
  method?: string
  status?: number
  durationMs?: number
  /** The answer's error code (`INVALID_EMAIL_OR_PASSWORD`, `INTERNAL_SERVER_ERROR`, …). */
  code?: string
}

export interface Logger {
  info(message: string): void
  warn(message: string): void
  error(message: string, error?: unknown): void
  /** A line with request fields (the configured logger's); others get them folded into the text. */
  log?(level: LogLevel, message: string, fields: LogFields, error?: unknown): void
  /** Whether a line of this level is written; absent: every level but debug. */
  enabled?(level: LogLevel): boolean
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export interface LogSettings {
  format: 'text' | 'json'
  level: LogLevel
}

export interface LogStreams {
  out: (line: string) => void
  err: (line: string) => void
  now: () => number
}

const processStreams: LogStreams = {
  out: (line) => process.stdout.write(line),
  err: (line) => process.stderr.write(line),
  now: () => Date.now(),
}

function describeError(error: unknown): { message: string; stack?: string; code?: string } | undefined {
  if (error === undefined || error === null || error === '') return undefined
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code
    return { message: error.message, ...(error.stack ? { stack: error.stack } : {}), ...(typeof code === 'string' ? { code } : {}) }
  }
  return { message: String(error) }
}

/** The text form of a request's fields: ` (request abc, POST /sign-in/email 401 INVALID_…, 3.1 ms)`. */
function textFields(fields: LogFields): string {
  const parts: string[] = []
  if (fields.requestId) parts.push(`request ${fields.requestId}`)
  const answer = [fields.method, fields.route, fields.status, fields.code].filter((v) => v !== undefined).join(' ')
  if (answer) parts.push(answer)
  if (fields.durationMs !== undefined) parts.push(`${fields.durationMs} ms`)
  return parts.length > 0 ? ` (${parts.join(', ')})` : ''
}

/** The logger of `gatehouse serve`: format and level from the live config. */
export function configuredLogger(settings: () => LogSettings, streams: LogStreams = processStreams): Logger {
  const enabled = (level: LogLevel) => RANK[level] >= RANK[settings().level]
  const write = (level: LogLevel, message: string, fields: LogFields, error?: unknown) => {
    const current = settings()
    if (RANK[level] < RANK[current.level]) return
    if (current.format === 'json') {
      const err = describeError(error)
      const line = { time: new Date(streams.now()).toISOString(), level, msg: message, ...fields, ...(err ? { error: err } : {}) }
      streams.out(`${JSON.stringify(line)}\n`)
      return
    }
    const text = `${message}${textFields(fields)}`
    if (level === 'info') streams.out(`${text}\n`)
    else if (level === 'debug') streams.out(`debug: ${text}\n`)
    else if (level === 'warn') streams.err(`warning: ${text}\n`)
    else {
      const err = error instanceof Error ? (error.stack ?? error.message) : error === undefined ? '' : String(error)
      streams.err(`${text}${err ? ` ${err}` : ''}\n`)
    }
  }
  return {
    info: (m) => write('info', m, {}),
    warn: (m) => write('warn', m, {}),
    error: (m, e) => write('error', m, {}, e),
    log: write,
    enabled,
  }
}

/** Writes a line with request fields through any logger (one without `log` gets them in its text). */
export function logWith(logger: Logger, level: LogLevel, message: string, fields: LogFields, error?: unknown): void {
  if (logger.log) {
    logger.log(level, message, fields, error)
    return
  }
  if (level === 'debug') return
  const text = `${message}${textFields(fields)}`
  if (level === 'info') logger.info(text)
  else if (level === 'warn') logger.warn(text)
  else logger.error(text, error)
}

/** Whether a logger writes a level. */
export const logs = (logger: Logger, level: LogLevel): boolean => logger.enabled?.(level) ?? level !== 'debug'
