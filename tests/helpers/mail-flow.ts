import type { GatehouseConfigInput } from '../../server/config/schema.js'
import { type Answer, HttpClient } from './http.js'
import { startTestServer, type TestServer, type TestClock } from './server.js'
import { type ReceivedMail, type SmtpSink, startSmtpSink } from './smtp.js'

/** A real server whose mail goes to a real SMTP sink on loopback. */
export interface MailServer {
  server: TestServer
  sink: SmtpSink
  close(): Promise<void>
}

export async function startMailServer(config: GatehouseConfigInput = {}, clock?: TestClock): Promise<MailServer> {
  const sink = await startSmtpSink()
  const server = await startTestServer({
    config: { ...config, mail: { ...config.mail, smtp: { url: sink.url } } },
    ...(clock ? { clock } : {}),
  })
  return {
    server,
    sink,
    async close() {
      await server.close()
      await sink.close()
    },
  }
}

/** The first link of a mail's plain-text part that starts with `prefix` (e.g. `${base}/verify-email`). */
export function linkIn(mail: ReceivedMail, prefix: string): string {
  const found = mail.text.match(/https?:\/\/\S+/g)?.find((u) => u.startsWith(prefix))
  if (!found) throw new Error(`no link starting with ${prefix} in mail "${mail.subject}":\n${mail.text}`)
  return found
}

/** Opens an absolute link of the server with the client's cookies (redirects not followed). */
export function follow<T = unknown>(client: HttpClient, url: string): Promise<Answer<T>> {
  if (!url.startsWith(client.base)) throw new Error(`${url} is not under ${client.base}`)
  return client.get<T>(url.slice(client.base.length))
}

/**
 * Runs `action` and waits for the new mail to `address` with a matching subject that it caused
 * (mail still being delivered from earlier actions is let through first).
 */
export async function withMail<T>(
  m: MailServer,
  address: string,
  subject: RegExp,
  action: () => Promise<T>,
): Promise<{ result: T; mail: ReceivedMail }> {
  await settle(m)
  const before = new Set(mailsTo(m.sink, address))
  const result = await action()
  const mail = await m.sink.waitFor(address, (x) => !before.has(x) && subject.test(x.subject))
  return { result, mail }
}

/** Lets background work (deferred token creation, outbox delivery) finish. */
export async function settle(m: MailServer): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve))
  await m.server.gatehouse.ctx.mailer.whenIdle?.()
}

export const mailsTo = (sink: SmtpSink, address: string, subject?: RegExp): ReceivedMail[] =>
  sink.inbox.filter((m) => m.to.includes(address.toLowerCase()) && (!subject || subject.test(m.subject)))

export const anonymous = (server: TestServer) => new HttpClient(server.base)
