import { describe, expect, it } from 'vitest'
import { configuredLogger, type LogSettings, logs, logWith } from '../../server/log.js'

function capture(settings: LogSettings) {
  const out: string[] = []
  const err: string[] = []
  const logger = configuredLogger(() => settings, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    now: () => Date.UTC(2026, 10, 25, 12, 0, 0),
  })
  return { logger, out, err }
}

describe('the server log (log.format, log.level)', () => {
  it('json: one object per line with time, level, msg and the request fields; an error once, with its stack', () => {
    const { logger, out, err } = capture({ format: 'json', level: 'debug' })
    logger.info('Gatehouse API listening on http://127.0.0.1:4280/api/auth')
    logWith(logger, 'debug', 'request answered', {
      requestId: 'abc-1',
      route: '/sign-in/email',
      method: 'POST',
      status: 401,
      durationMs: 3.25,
      code: 'INVALID_EMAIL_OR_PASSWORD',
    })
    const failure = new Error('disk I/O error')
    logWith(logger, 'error', 'unexpected error on /sign-in/email', { requestId: 'abc-2', method: 'POST', route: '/sign-in/email' }, failure)
    expect(err).toEqual([])
    expect(out).toHaveLength(3)
    for (const line of out) expect(line.endsWith('\n') && !line.slice(0, -1).includes('\n')).toBe(true)
    const [start, answered, error] = out.map((line) => JSON.parse(line))
    expect(start).toEqual({
      time: '2026-11-25T12:00:00.000Z',
      level: 'info',
      msg: 'Gatehouse API listening on http://127.0.0.1:4280/api/auth',
    })
    expect(answered).toEqual({
      time: '2026-11-25T12:00:00.000Z',
      level: 'debug',
      msg: 'request answered',
      requestId: 'abc-1',
      route: '/sign-in/email',
      method: 'POST',
      status: 401,
      durationMs: 3.25,
      code: 'INVALID_EMAIL_OR_PASSWORD',
    })
    expect(error).toMatchObject({ level: 'error', msg: 'unexpected error on /sign-in/email', requestId: 'abc-2' })
    expect(error.error.message).toBe('disk I/O error')
    expect(error.error.stack).toContain('disk I/O error')
  })

  it('text: the lines as before, request fields in parentheses; debug dropped at info', () => {
    const { logger, out, err } = capture({ format: 'text', level: 'info' })
    logger.info('Data directory: /srv/gatehouse')
    logger.warn('the default secret is in use')
    expect(logs(logger, 'debug')).toBe(false)
    logWith(logger, 'debug', 'request answered', { requestId: 'x-1', status: 200 })
    logWith(logger, 'error', 'unexpected error on /ok', { requestId: 'x-2', method: 'GET', route: '/ok' }, new Error('boom'))
    expect(out).toEqual(['Data directory: /srv/gatehouse\n'])
    expect(err[0]).toBe('warning: the default secret is in use\n')
    expect(err[1]).toMatch(/^unexpected error on \/ok \(request x-2, GET \/ok\) Error: boom\n {4}at /)
    expect(err).toHaveLength(2)
  })

  it('level warn drops info; the level is read at each line', () => {
    const settings: LogSettings = { format: 'json', level: 'warn' }
    const { logger, out } = capture(settings)
    logger.info('dropped')
    logger.warn('kept')
    settings.level = 'info'
    logger.info('kept too')
    expect(out.map((line) => JSON.parse(line).msg)).toEqual(['kept', 'kept too'])
  })

  it('a logger of its own (tests, the desktop app) gets the request fields folded into its text', () => {
    const lines: string[] = []
    const plain = {
      info: (m: string) => lines.push(`info ${m}`),
      warn: (m: string) => lines.push(`warn ${m}`),
      error: (m: string) => lines.push(`error ${m}`),
    }
    logWith(plain, 'debug', 'request answered', { requestId: 'r-1' })
    logWith(plain, 'error', 'unexpected error on /ok', { requestId: 'r-2', method: 'GET', route: '/ok' }, new Error('boom'))
    expect(lines).toEqual(['error unexpected error on /ok (request r-2, GET /ok)'])
  })
})
