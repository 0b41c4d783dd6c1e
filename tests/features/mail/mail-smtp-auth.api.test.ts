import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPanelService } from '../../../server/panel/service.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/** An SMTP server that insists on one user and password, to prove the sealed password opens. */
let smtp: SMTPServer
let port = 0
const logins: Array<{ user: string; pass: string }> = []
let server: TestServer

beforeAll(async () => {
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      logins.push({ user: auth.username ?? '', pass: auth.password ?? '' })
      if (auth.username === 'mailer' && auth.password === 'smtp pass: s3cret!') callback(null, { user: 'mailer' })
      else callback(new Error('Invalid username or password'))
    },
    onData(stream, _session, callback) {
      stream.resume()
      stream.on('end', () => callback())
    },
  })
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()))
  const address = smtp.server.address()
  port = address && typeof address === 'object' ? address.port : 0
  server = await startTestServer()
})
afterAll(async () => {
  await server.close()
  await new Promise<void>((resolve) => smtp.close(() => resolve()))
})

describe('SMTP password set in the control panel', () => {
  it('is stored sealed, never in clear, and still authenticates the delivery', async () => {
    const panel = createPanelService({
      gatehouse: server.gatehouse,
      apiURL: () => server.base,
      mode: 'browser',
      version: 'test',
      startedAt: Date.now(),
      logger: silentLogger,
    })
    const saved = await panel.dispatch('email.update', {
      host: '127.0.0.1',
      port,
      secure: false,
      user: 'mailer',
      password: 'smtp pass: s3cret!',
      from: 'Gatehouse <gatehouse@example.com>',
    })
    expect(saved).toEqual({ ok: true, data: { success: true } })

    const stored = readFileSync(join(server.dataDir, 'config.json'), 'utf8')
    expect(stored).not.toContain('s3cret')
    expect(JSON.parse(stored).mail.smtp.password).toMatch(/^enc:v1:/)
    const shown = await panel.dispatch('email.get', {})
    expect(JSON.stringify(shown)).not.toContain('s3cret')

    const sent = await panel.dispatch('email.sendTest', { to: 'someone@example.com' })
    expect(sent).toMatchObject({ ok: true, data: { status: 'sent' } })
    expect(logins).toEqual([{ user: 'mailer', pass: 'smtp pass: s3cret!' }])
  })
})
