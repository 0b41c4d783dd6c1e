import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'

/**
 * docs/SSO.md's "Running the real suite": the client registration block runs verbatim, and the
 * plan file docs/conformance/gatehouse-basic-op.json is what the suite reads (its clients, the
 * discovery URL, and browser steps that name the hosted pages' real fields and buttons).
 */

const root = join(import.meta.dirname, '..', '..', '..', '..')
const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-conformance-doc-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const section = (() => {
  const doc = readFileSync(join(root, 'docs', 'SSO.md'), 'utf8')
  return doc.slice(doc.indexOf('## Conformance'))
})()

it("docs/SSO.md's client registration block for the suite runs as written", () => {
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
  expect(block).toContain('npx gatehouse oidc client create')
  const out = execFileSync('bash', ['-e', '-c', block], {
    cwd: root,
    env: { ...process.env, GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_SECRET: 'conformance-doc-secret-0123456789abcdef' },
    encoding: 'utf8',
  })
  const clients = out
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { clientId: string; clientSecret: string })
  expect(clients).toHaveLength(2)
  for (const client of clients) {
    expect(client.clientId).toMatch(/^\w+$/)
    expect(client.clientSecret.length).toBeGreaterThan(20)
  }
  expect(clients[0]?.clientId).not.toBe(clients[1]?.clientId)
}, 60_000)

it('docs/conformance/gatehouse-basic-op.json names the clients, the discovery URL and the hosted pages as they are', () => {
  const plan = JSON.parse(readFileSync(join(root, 'docs', 'conformance', 'gatehouse-basic-op.json'), 'utf8'))
  expect(plan.server.discoveryUrl).toBe('https://auth.example.com/api/auth/.well-known/openid-configuration')
  expect(plan.client).toMatchObject({ client_id: 'CLIENT_ID', client_secret: 'CLIENT_SECRET' })
  expect(plan.client_secret_post).toMatchObject({ client_id: 'CLIENT_ID', client_secret: 'CLIENT_SECRET' })
  expect(plan.client2).toMatchObject({ client_id: 'CLIENT2_ID', client_secret: 'CLIENT2_SECRET' })
  const text = JSON.stringify(plan.browser)
  // The sign-in page's fields, the consent page's and the sign-out page's buttons.
  const signIn = readFileSync(join(root, 'renderer', 'hosted', 'src', 'pages', 'SignIn.tsx'), 'utf8')
  const consent = readFileSync(join(root, 'renderer', 'hosted', 'src', 'pages', 'Consent.tsx'), 'utf8')
  const signOut = readFileSync(join(root, 'renderer', 'hosted', 'src', 'pages', 'SignOut.tsx'), 'utf8')
  expect(text).toContain('"name","identifier"')
  expect(signIn).toContain('name="identifier"')
  expect(text).toContain('"name","password"')
  expect(signIn).toContain('name="password"')
  expect(text).toContain("//button[normalize-space()='Allow']")
  expect(consent).toMatch(/>\s*Allow\s*</)
  expect(text).toContain("//button[normalize-space()='Sign out']")
  expect(signOut).toMatch(/>\s*Sign out\s*</)
  for (const page of ['/api/auth/ui/sign-in*', '/api/auth/ui/consent*', '/api/auth/ui/sign-out*']) expect(text).toContain(page)
})
