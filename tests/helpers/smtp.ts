import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  from: string
  to: string[]
  raw: string
  subject: string
  /** The decoded text/plain part (or the whole body when not multipart). */
  text: string
  html: string
}

export interface SmtpSink {
  port: number
  url: string
  inbox: ReceivedMail[]
  /** Resolves with the first mail to `address` received (now or later), bounded by `timeoutMs`. */
  waitFor(address: string, predicate?: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>
  close(): Promise<void>
}

function decodeQuotedPrintable(s: string): string {
  const bytes = s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)))
  return Buffer.from(bytes, 'latin1').toString('utf8')
}

function decodePart(headers: string, body: string): string {
  if (/content-transfer-encoding:\s*base64/i.test(headers)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
  if (/content-transfer-encoding:\s*quoted-printable/i.test(headers)) return decodeQuotedPrintable(body)
  return body
}

function decodeHeader(value: string): string {
  return value.replace(/=\?utf-8\?([BQ])\?([^?]*)\?=/gi, (_, enc: string, text: string) =>
    enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQuotedPrintable(text.replace(/_/g, ' ')),
  )
}

/** Parses the parts of a MIME message well enough for tests: subject, text and html. */
export function parseMail(raw: string): Pick<ReceivedMail, 'subject' | 'text' | 'html'> {
  const [head = '', ...rest] = raw.split(/\r?\n\r?\n/)
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ')
  const subject = decodeHeader(/^subject:\s*(.*)$/im.exec(unfolded)?.[1] ?? '')
  const body = rest.join('\n\n')
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(unfolded)?.[1]
  let text = ''
  let html = ''
  if (boundary) {
    for (const part of body.split(`--${boundary}`)) {
      const [partHead = '', ...partBody] = part.replace(/^\r?\n/, '').split(/\r?\n\r?\n/)
      const content = decodePart(partHead, partBody.join('\n\n')).trim()
      if (/content-type:\s*text\/plain/i.test(partHead)) text = content
      else if (/content-type:\s*text\/html/i.test(partHead)) html = content
    }
  } else {
    text = decodePart(unfolded, body).trim()
  }
  return { subject, text, html }
}

/** A real SMTP server on a loopback port that keeps what it receives. */
export async function startSmtpSink(port = 0): Promise<SmtpSink> {
  const inbox: ReceivedMail[] = []
  const waiters: Array<{ address: string; predicate: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }> = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          raw,
          ...parseMail(raw),
        }
        inbox.push(mail)
        for (const waiter of [...waiters]) {
          if (mail.to.includes(waiter.address.toLowerCase()) && waiter.predicate(mail)) {
            waiters.splice(waiters.indexOf(waiter), 1)
            waiter.resolve(mail)
          }
        }
        callback()
      })
    },
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve())
  })
  const address = server.server.address()
  const actualPort = address && typeof address === 'object' ? address.port : port
  return {
    port: actualPort,
    url: `smtp://127.0.0.1:${actualPort}`,
    inbox,
    waitFor(address, predicate = () => true, timeoutMs = 10_000) {
      const found = inbox.find((m) => m.to.includes(address.toLowerCase()) && predicate(m))
      if (found) return Promise.resolve(found)
      return new Promise((resolve, reject) => {
        const waiter = {
          address,
          predicate,
          resolve: (m: ReceivedMail) => {
            clearTimeout(timer)
            resolve(m)
          },
        }
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1)
          reject(new Error(`no mail to ${address} within ${timeoutMs} ms`))
        }, timeoutMs)
        waiters.push(waiter)
      })
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
