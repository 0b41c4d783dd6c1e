/**
 * Issue 27's single-use rules across instances: a magic link or an email code is accepted once,
 * whichever instances the parallel uses reach (two real `gatehouse serve` processes on one
 * PostgreSQL). Needs `npm run build:server` (dist/server/main.mjs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../helpers/engines.js'
import { uniqueEmail } from '../helpers/http.js'
import { type Instance, PUBLIC_ORIGIN, startInstance } from '../helpers/instances.js'
import { type SmtpSink, startSmtpSink } from '../helpers/smtp.js'

const noPostgres = postgresUnavailable()
warnSkipped('magic link / email code across instances (tests/multi)', noPostgres)

describe.skipIf(noPostgres)('magic links and email codes across two instances', () => {
  let postgres: PostgresServer
  let smtp: SmtpSink
  let a: Instance
  let b: Instance

  beforeAll(async () => {
    postgres = await startPostgres()
    const databaseUrl = await postgres.createDatabase('mlotp')
    smtp = await startSmtpSink()
    const config = { rateLimit: { enabled: false }, magicLink: { enabled: true }, emailOTP: { enabled: true } }
    a = await startInstance('a', { databaseUrl, config, smtpUrl: smtp.url })
    b = await startInstance('b', { databaseUrl, config, smtpUrl: smtp.url })
  }, 120_000)

  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await smtp?.close()
    await postgres?.stop()
  })

  it('one magic link used 8 times at once on both instances makes one session', async () => {
    const email = uniqueEmail('multi-ml')
    expect((await a.client().post('/sign-in/magic-link', { email })).status).toBe(200)
    const mail = await smtp.waitFor(email, (m) => /^Sign in to /.test(m.subject), 15_000)
    const link = mail.text.match(/https?:\/\/\S+magic-link\/verify\S+/)?.[0] as string
    const path = link.slice(`${PUBLIC_ORIGIN}/api/auth`.length)
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).client().get(path)))
    const locations = answers.map((x) => x.headers.get('location'))
    expect(locations.filter((l) => l === `${PUBLIC_ORIGIN}/`)).toHaveLength(1)
    expect(locations.filter((l) => l === `${PUBLIC_ORIGIN}/?error=INVALID_TOKEN`)).toHaveLength(7)
  })

  it('one email code used 8 times at once on both instances signs in once', async () => {
    const email = uniqueEmail('multi-otp')
    expect((await b.client().post('/email-otp/send-verification-otp', { email, type: 'sign-in' })).status).toBe(200)
    const mail = await smtp.waitFor(email, (m) => /sign-in code/.test(m.subject), 15_000)
    const otp = mail.subject.match(/: (\d+)$/)?.[1] as string
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).client().post('/sign-in/email-otp', { email, otp })),
    )
    expect(answers.filter((x) => x.status === 200)).toHaveLength(1)
    for (const x of answers.filter((y) => y.status !== 200)) expect(x.body).toMatchObject({ code: 'INVALID_OTP' })
  })
})
