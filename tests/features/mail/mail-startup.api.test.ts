import { afterAll, describe, expect, it } from 'vitest'
import { createPanelService } from '../../../server/panel/service.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 37 §11: SMTP settings set at start-up (--smtp-url; mail keys from --config) are said so by
 * the Email view's operation, without the URL's password, and its Save refuses rather than claim
 * to take effect.
 */

const servers: TestServer[] = []
afterAll(async () => {
  for (const s of servers) await s.close()
})

const panelOf = (server: TestServer) =>
  createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })

const form = { host: 'smtp.example.com', port: 2525, secure: false, user: 'mailer', from: 'a@example.com' }

describe('SMTP set at start-up', () => {
  it('--smtp-url: shown without its password, read-only (Save refused, nothing stored)', async () => {
    const server = await startTestServer({ smtpUrl: 'smtp://mailer:FLAG-PW-1@127.0.0.1:2525' })
    servers.push(server)
    const panel = panelOf(server)
    const got = await panel.dispatch('email.get', {})
    expect(got).toMatchObject({ ok: true, data: { configured: true, startup: { smtpUrl: 'smtp://mailer@127.0.0.1:2525', keys: [] } } })
    expect(JSON.stringify(got)).not.toContain('FLAG-PW-1')
    const saved = await panel.dispatch('email.update', form)
    expect(saved).toMatchObject({ ok: false, error: { code: 'SET_AT_STARTUP', status: 409, issues: [{ path: 'host' }] } })
    expect(server.gatehouse.config.storedLayer()).not.toHaveProperty('mail')
  })

  it('mail keys from --config are named; without start-up options the settings save', async () => {
    const fromConfig = await startTestServer({ config: { mail: { smtp: { host: 'relay.example.com', port: 25 } } } })
    servers.push(fromConfig)
    const got = await panelOf(fromConfig).dispatch('email.get', {})
    expect(got).toMatchObject({ ok: true, data: { startup: { smtpUrl: null, keys: ['mail.smtp.host', 'mail.smtp.port'] } } })
    expect(await panelOf(fromConfig).dispatch('email.update', form)).toMatchObject({ ok: false, error: { code: 'SET_AT_STARTUP' } })

    const plain = await startTestServer()
    servers.push(plain)
    expect(await panelOf(plain).dispatch('email.get', {})).toMatchObject({ ok: true, data: { startup: { smtpUrl: null, keys: [] } } })
    expect(await panelOf(plain).dispatch('email.update', form)).toMatchObject({ ok: true })
    expect(plain.gatehouse.ctx.config().mail.smtp.host).toBe('smtp.example.com')
  })
})
