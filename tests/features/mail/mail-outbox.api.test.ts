import { describe, expect, it, vi } from 'vitest'
import {
  listMailOutbox,
  OutboxMailer,
  retryAllFailedMail,
  retryMail,
  sendTestEmail,
  waitForMailDelivery,
} from '../../../server/mail/index.js'
import { createPanelService } from '../../../server/panel/service.js'
import { HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { serverLog, silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'
import { startSmtpSink } from '../../helpers/smtp.js'

/** A loopback port where nothing listens (an SMTP server that is down). */
async function deadPort(): Promise<number> {
  const sink = await startSmtpSink()
  await sink.close()
  return sink.port
}

async function settle(server: TestServer): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve))
  await waitForMailDelivery(server.gatehouse.ctx)
}

const requestVerification = (server: TestServer, email: string) => new HttpClient(server.base).post('/send-verification-email', { email })

describe('mail outbox', () => {
  it('records every message: queued, then sent with the time and attempt count; the HTML escapes user input', async () => {
    const sink = await startSmtpSink()
    const server = await startTestServer({ config: { mail: { smtp: { url: sink.url }, from: 'Auth <auth@gatehouse.test>' } } })
    try {
      const email = uniqueEmail('outbox')
      await signUp(server.base, { email, name: '<script>alert(1)</script>' })
      expect((await requestVerification(server, email)).status).toBe(200)
      const received = await sink.waitFor(email)
      expect(received.from).toBe('auth@gatehouse.test')
      expect(received.html).toContain('Hello &lt;script&gt;alert(1)&lt;/script&gt;,')
      expect(received.html).not.toContain('<script>')
      expect(received.text).toContain('Hello <script>alert(1)</script>,')
      await settle(server)
      const page = await listMailOutbox(server.gatehouse.ctx, { to: email })
      expect(page.total).toBe(1)
      const [row] = page.messages
      expect(row).toMatchObject({ to: email, kind: 'verification', status: 'sent', attempts: 1, error: null, subject: received.subject })
      expect(row?.sentAt?.getTime()).toBe(server.clock.now())
      expect(row?.text).toBe(received.text)
    } finally {
      await server.close()
      await sink.close()
    }
  })

  it('SMTP down → failed with the error, message kept; SMTP back → retried → sent, exactly once', async () => {
    const port = await deadPort()
    const server = await startTestServer({ config: { mail: { smtp: { url: `smtp://127.0.0.1:${port}` } } } })
    serverLog.allowWarning(/\(verification\) to retry.* failed via smtp:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED/)
    try {
      const email = uniqueEmail('retry')
      await signUp(server.base, { email })
      expect((await requestVerification(server, email)).status).toBe(200)
      await settle(server)
      const [failed] = (await listMailOutbox(server.gatehouse.ctx, { to: email })).messages
      expect(failed).toMatchObject({ status: 'failed', attempts: 1, sentAt: null })
      expect(failed?.error).toMatch(/ECONNREFUSED/)
      expect((await listMailOutbox(server.gatehouse.ctx, { status: 'failed' })).total).toBe(1)

      const sink = await startSmtpSink(port)
      try {
        const queued = await retryMail(server.gatehouse.ctx, failed?.id as string)
        expect(queued.status).toBe('queued')
        const received = await sink.waitFor(email)
        expect(received.subject).toBe(failed?.subject)
        await settle(server)
        const [sent] = (await listMailOutbox(server.gatehouse.ctx, { to: email })).messages
        expect(sent).toMatchObject({ id: failed?.id, status: 'sent', attempts: 2 })
        // Retrying a sent message does nothing.
        expect((await retryMail(server.gatehouse.ctx, failed?.id as string)).status).toBe('sent')
        await settle(server)
        expect(sink.inbox.filter((m) => m.to.includes(email))).toHaveLength(1)
        await expect(retryMail(server.gatehouse.ctx, 'nope')).rejects.toThrow('Mail not found')
      } finally {
        await sink.close()
      }
    } finally {
      await server.close()
    }
  })

  it('without SMTP, messages stay queued and the API answers as usual; configuring SMTP live delivers them', async () => {
    const server = await startTestServer()
    const sink = await startSmtpSink()
    try {
      const email = uniqueEmail('nosmtp')
      await signUp(server.base, { email })
      const res = await new HttpClient(server.base).post('/request-password-reset', { email })
      expect(res.body).toMatchObject({ status: true })
      // The reset mail is written after the answer has left (in the background): on PostgreSQL that
      // takes several round trips, so wait for the row rather than for one turn of the event loop.
      await vi.waitFor(
        async () => {
          await settle(server)
          expect((await listMailOutbox(server.gatehouse.ctx, { to: email })).messages.map((r) => [r.kind, r.status])).toEqual([
            ['password-reset', 'queued'],
          ])
        },
        { timeout: 10_000, interval: 20 },
      )

      server.gatehouse.config.update({ mail: { smtp: { host: '127.0.0.1', port: sink.port, secure: false } } })
      const received = await sink.waitFor(email)
      expect(received.subject).toMatch(/^Reset your/)
      await settle(server)
      expect((await listMailOutbox(server.gatehouse.ctx, { to: email })).messages[0]?.status).toBe('sent')
    } finally {
      await server.close()
      await sink.close()
    }
  })

  it('queued messages survive a restart and go out when the server starts with SMTP', async () => {
    const first = await startTestServer({ keepData: true })
    const email = uniqueEmail('restart')
    await signUp(first.base, { email })
    await requestVerification(first, email)
    await settle(first)
    await first.close()
    const sink = await startSmtpSink()
    const second = await startTestServer({ dataDir: first.dataDir, config: { mail: { smtp: { url: sink.url } } } })
    try {
      expect((await sink.waitFor(email)).subject).toMatch(/^Verify your email address/)
    } finally {
      await second.close()
      await sink.close()
    }
  })

  it('sendTestEmail reports sent or failed; retryAllFailedMail re-queues every failed message', async () => {
    const port = await deadPort()
    const server = await startTestServer({ config: { mail: { smtp: { url: `smtp://127.0.0.1:${port}` } } } })
    serverLog.allowWarning(/\(test\) to (admin|second)@example\.com failed via smtp:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED/)
    try {
      const ctx = server.gatehouse.ctx
      const failed = await sendTestEmail(ctx, 'Admin@Example.com')
      expect(failed).toMatchObject({ to: 'admin@example.com', kind: 'test', status: 'failed' })
      expect(failed.error).toMatch(/ECONNREFUSED/)
      await sendTestEmail(ctx, 'second@example.com')
      await expect(sendTestEmail(ctx, 'not an address')).rejects.toMatchObject({
        status: 400,
        code: 'INVALID_EMAIL',
        message: 'Invalid email',
      })
      expect((await listMailOutbox(ctx, { status: 'failed', kind: 'test' })).total).toBe(2)

      const sink = await startSmtpSink(port)
      try {
        expect(await retryAllFailedMail(ctx)).toBe(2)
        await sink.waitFor('admin@example.com')
        await sink.waitFor('second@example.com')
        await settle(server)
        expect((await listMailOutbox(ctx, { status: 'sent' })).total).toBe(2)
        // A new millisecond: newest first is then one order on both engines (PostgreSQL has no rowid).
        server.clock.advance(1)
        const ok = await sendTestEmail(ctx, 'third@example.com')
        expect(ok).toMatchObject({ status: 'sent', attempts: 1 })
        // Newest first, paged.
        const page = await listMailOutbox(ctx, { limit: 1, offset: 0 })
        expect(page).toMatchObject({ total: 3, limit: 1, offset: 0 })
        expect(page.messages[0]?.to).toBe('third@example.com')
      } finally {
        await sink.close()
      }
    } finally {
      await server.close()
    }
  })

  it('counts as configured with the --smtp-url flag alone, for the mailer and for the panel', async () => {
    const server = await startTestServer()
    try {
      const { ctx, config } = server.gatehouse
      const quiet = { info() {}, warn() {} }
      const mailer = (smtpUrl?: string) =>
        new OutboxMailer({ db: ctx.db, clock: ctx.clock, config: () => config.get(), smtpUrl, logger: quiet })
      expect(mailer().isConfigured()).toBe(false)
      expect(mailer('smtp://127.0.0.1:2525').isConfigured()).toBe(true)
      const panel = createPanelService({
        gatehouse: server.gatehouse,
        apiURL: () => server.base,
        mode: 'browser',
        version: 'test',
        startedAt: 0,
        logger: silentLogger,
      })
      expect(await panel.dispatch('email.get', {})).toMatchObject({ ok: true, data: { configured: false, smtp: { hasPassword: false } } })
      config.update({ mail: { smtp: { host: '127.0.0.1', port: 2525 } } })
      expect(await panel.dispatch('email.get', {})).toMatchObject({
        ok: true,
        data: { configured: true, smtp: { host: '127.0.0.1', port: 2525 } },
      })
    } finally {
      await server.close()
    }
  })
})
