import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPanelService, type PanelService } from '../../../server/panel/service.js'
import { HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { silentLogger, startTestServer, TestClock, type TestServer } from '../../helpers/server.js'
import { type SmtpSink, startSmtpSink } from '../../helpers/smtp.js'

/**
 * Mail templates edited in the panel (issue 31 §3): subject and body per message kind, placeholders
 * checked, stored in the config, reset to the built-in message, and used by the outbox for the
 * messages it queues (the real SMTP sink receives them; the mailed link still works).
 */

let server: TestServer
let sink: SmtpSink
let panel: PanelService

beforeAll(async () => {
  sink = await startSmtpSink()
  server = await startTestServer({
    clock: new TestClock(Date.now()),
    config: { emailVerification: { sendOnSignUp: true }, mail: { smtp: { url: sink.url }, appName: 'Acme' } },
  })
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
})
afterAll(async () => {
  await server?.close()
  await sink?.close()
})

async function op<T = unknown>(
  name: string,
  input: unknown,
): Promise<{ ok: true; data: T } | { ok: false; error: Record<string, unknown> }> {
  return (await panel.dispatch(name, input)) as never
}
async function data<T>(name: string, input: unknown = {}): Promise<T> {
  const result = await op<T>(name, input)
  if (!result.ok) throw new Error(`${name}: ${JSON.stringify(result.error)}`)
  return result.data
}

interface TemplateView {
  kind: string
  subject: string
  body: string
  custom: boolean
  placeholders: Array<{ name: string }>
}

const linkIn = (text: string): string => (/https?:\/\/\S+/.exec(text)?.[0] ?? '').replace(/[)>.,]+$/, '')

describe('mail templates', () => {
  it('lists every message with its built-in subject and body as the editor shows them', async () => {
    const templates = await data<TemplateView[]>('email.templates')
    const verification = templates.find((t) => t.kind === 'verification')
    expect(verification).toEqual({
      kind: 'verification',
      subject: 'Verify your email address for {{appName}}',
      body: '{{greeting}}\n\n{{message}}',
      custom: false,
      placeholders: ['appName', 'email', 'greeting', 'message', 'url'].map((name) => ({ name, description: expect.any(String) })),
    })
    // The test message has no link: no {{url}}.
    expect(templates.find((t) => t.kind === 'test')?.placeholders.map((p) => p.name)).toEqual(['appName', 'email', 'greeting', 'message'])
    expect(templates.map((t) => t.kind)).toEqual(expect.arrayContaining(['verification', 'password-reset', 'test']))
  })

  it('refuses a template with an unknown or unusable placeholder, naming the field; nothing is stored', async () => {
    const unknown = await op('email.saveTemplate', { kind: 'verification', subject: 'Hi {{appName}}', body: 'Dear {{nmae}}, {{url}}' })
    expect(unknown).toEqual({
      ok: false,
      error: expect.objectContaining({
        status: 400,
        code: 'INVALID_TEMPLATE',
        message: 'Unknown placeholder {{nmae}}: use {{appName}}, {{email}}, {{greeting}}, {{message}}, {{url}}',
        issues: [{ path: 'body', message: 'Unknown placeholder {{nmae}}: use {{appName}}, {{email}}, {{greeting}}, {{message}}, {{url}}' }],
      }),
    })
    const noLink = await op('email.saveTemplate', { kind: 'test', subject: 'Test', body: 'Open {{url}}' })
    expect(noLink).toMatchObject({
      ok: false,
      error: { code: 'INVALID_TEMPLATE', issues: [{ path: 'body', message: 'This message has no link: {{url}} cannot be used' }] },
    })
    const unclosed = await op('email.saveTemplate', { kind: 'verification', subject: 'Welcome to {{appName', body: '{{message}}' })
    expect(unclosed).toMatchObject({
      ok: false,
      error: { issues: [{ path: 'subject', message: 'A placeholder is not closed: write it as {{name}}' }] },
    })
    const empty = await op('email.saveTemplate', { kind: 'verification', subject: '  ', body: '{{message}}' })
    expect(empty).toMatchObject({ ok: false, error: { issues: [{ path: 'subject', message: 'Enter a subject' }] } })
    const nobody = await op('email.saveTemplate', { kind: 'no-such-kind', subject: 'x', body: 'y' })
    expect(nobody).toMatchObject({ ok: false, error: { status: 404, code: 'TEMPLATE_NOT_FOUND' } })
    // A draft is checked the same way by the preview.
    expect(await op('email.preview', { kind: 'verification', draft: { subject: 'x', body: '{{oops}}' } })).toMatchObject({
      ok: false,
      error: { code: 'INVALID_TEMPLATE' },
    })
    expect(server.gatehouse.config.storedLayer()).not.toHaveProperty('mail.templates')
  })

  it('saves a template, previews it, and the outbox sends new messages with it; the link still verifies; reset brings the built-in one back', async () => {
    const template = {
      kind: 'verification',
      subject: 'Confirm {{email}} for {{appName}}',
      body: 'Hi there,\n\nPlease confirm your address: {{url}}\n\nThe built-in words: {{message}}',
    }
    expect(await data('email.saveTemplate', template)).toEqual({ success: true })
    expect(server.gatehouse.config.storedLayer()).toMatchObject({
      mail: { templates: { verification: { subject: template.subject, body: template.body } } },
    })
    const listed = (await data<TemplateView[]>('email.templates')).find((t) => t.kind === 'verification')
    expect(listed).toMatchObject({ subject: template.subject, body: template.body, custom: true })

    const preview = await data<{ subject: string; text: string; html: string }>('email.preview', { kind: 'verification' })
    expect(preview.subject).toBe('Confirm ada@example.com for Acme')
    expect(preview.text).toMatch(/^Hi there,\nPlease confirm your address: http:\/\/\S+\/verify-email\?token=sample/)
    expect(preview.html).toContain('<h1 style="font-size:20px;margin:0 0 16px">Confirm ada@example.com for Acme</h1>')
    // A draft previews without being saved.
    const draft = await data<{ subject: string }>('email.preview', {
      kind: 'verification',
      draft: { subject: 'Draft {{appName}}', body: 'x' },
    })
    expect(draft.subject).toBe('Draft Acme')

    const email = uniqueEmail('templated')
    await signUp(server.base, { email })
    const mail = await sink.waitFor(email)
    expect(mail.subject).toBe(`Confirm ${email} for Acme`)
    expect(mail.text).toMatch(/^Hi there,\r?\nPlease confirm your address: http/)
    expect(mail.text).toContain('The built-in words: ')
    expect(mail.text).not.toContain('{{')
    expect(mail.html).toContain('Please confirm your address:')
    const link = linkIn(mail.text)
    expect(new URL(link).pathname).toBe('/api/auth/verify-email')
    const verified = await new HttpClient(server.base).get(link.replace(server.base, ''))
    // The link's callbackURL: a redirect, without an error.
    expect([verified.status, verified.headers.get('location')?.includes('error=')]).toEqual([302, false])
    const signedIn = await new HttpClient(server.base).post<{ user: { emailVerified: boolean } }>('/sign-in/email', {
      email,
      password: 'correct horse battery',
    })
    expect(signedIn.body.user.emailVerified).toBe(true)

    expect(await data('email.resetTemplate', { kind: 'verification' })).toEqual({ success: true })
    expect((await data<TemplateView[]>('email.templates')).find((t) => t.kind === 'verification')?.custom).toBe(false)
    const other = uniqueEmail('builtin')
    await signUp(server.base, { email: other })
    expect((await sink.waitFor(other)).subject).toBe('Verify your email address for Acme')
  })
})
