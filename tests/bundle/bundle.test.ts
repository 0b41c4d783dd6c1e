/**
 * The server as users run it: the bundle dist/server/main.mjs started by `bin/gatehouse.js serve`
 * (the same entry as `npm start`, the CLI and `gatehouse serve`; it rebuilds the bundle first when a
 * source changed), over real loopback HTTP. The API suite runs on the TypeScript sources in-process;
 * what only the bundle can break is what esbuild rewrites: module interop, and above all the modules
 * loaded lazily (split into chunks loaded at first use). So this file runs each lazy path once on the
 * bundle, plus a smoke request on every declared route, and proves the coverage twice:
 * - every `import(` in server/ is listed in LAZY_IMPORTS below with the test that runs it (a new
 *   lazy import fails the first test until it is covered here);
 * - every chunk the built bundle loads through `import()` was loaded by one of the servers or CLI
 *   runs of this file (a loader hook, tests/helpers/module-trace.mjs, records what each process
 *   loads); the last test fails otherwise.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { hash as argon2Hash } from '@node-rs/argon2'
import bcrypt from 'bcryptjs'
import { Client } from 'ldapts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type PostgresServer,
  postgresUnavailable,
  type RedisServer,
  redisUnavailable,
  startPostgres,
  startRedis,
  warnSkipped,
} from '../helpers/engines.js'
import { freePort } from '../helpers/engines.js'
import { HttpClient, uniqueEmail } from '../helpers/http.js'
import { markVerifiedInDataDir } from '../helpers/members.js'
import { type RunningServer, runCli, startServerProcess } from '../helpers/process.js'
import { type SmtpSink, startSmtpSink } from '../helpers/smtp.js'

const root = join(import.meta.dirname, '..', '..')
const distDir = join(root, 'dist', 'server')
const work = mkdtempSync(join(tmpdir(), 'gatehouse-bundle-'))
const traceFile = join(work, 'modules.txt')
const traceHook = pathToFileURL(join(root, 'tests', 'helpers', 'module-trace.mjs')).href
const traced = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${traceHook}`.trim(), GATEHOUSE_MODULE_TRACE: traceFile }

/**
 * Every lazy `import(` of server/ (file → specifier as written) and the test below that loads it on
 * the bundle. A computed specifier (`specifier`) is Vite, left out of the bundle on purpose.
 */
const LAZY_IMPORTS: Record<string, string> = {
  'server/cli.ts ./db/pg/migrate-command.js': 'PostgreSQL: gatehouse migrate --to',
  'server/core/tool-context.ts ../db/pg/index.js': 'PostgreSQL: a CLI command on the database',
  'server/features/email-password/password-policy.ts @zxcvbn-ts/core': 'rejectCommonPasswords',
  'server/features/email-password/password-policy.ts @zxcvbn-ts/language-common': 'rejectCommonPasswords',
  'server/features/hosted-pages/assets.ts specifier': 'hosted pages (built by the bundle on first request)',
  'server/features/oidc-provider/provider.ts oidc-provider': 'OIDC provider',
  'server/features/oidc-provider/provider.ts oidc-provider/lib/helpers/als.js': 'OIDC provider',
  'server/features/oidc-provider/provider.ts oidc-provider/lib/helpers/fetch_request.js': 'OIDC provider',
  'server/features/passkey/service.ts @simplewebauthn/server': 'passkey registration options',
  'server/gatehouse.ts ./secondary-storage/redis.js': 'Redis secondary storage',
  'server/gatehouse.ts ./db/pg/index.js': 'PostgreSQL: serve',
  'server/gatehouse.ts ./config/shared.js': 'PostgreSQL: serve',
  'server/gatehouse.ts ./db/pg/change-signal.js': 'PostgreSQL: serve',
  'server/gatehouse.ts ./db/pg/copy.js': 'PostgreSQL: serve (the pre-upgrade backup asks the schema state)',
  'server/features/backup/store.ts ../../db/pg/copy.js': 'PostgreSQL: serve (the same chunk: a backup of PostgreSQL)',
  'server/features/backup/archive.ts ../../db/pg/copy.js': 'PostgreSQL: serve (the same chunk: a restore into PostgreSQL)',
  'server/mail/outbox.ts nodemailer': 'SMTP delivery',
  'server/features/import/commands.ts ./cli.js': 'gatehouse import',
  'server/features/oidc-provider/commands.ts ./cli.js': 'OIDC provider',
  'server/features/jwt/commands.ts ./cli.js': 'gatehouse jwt keys and gatehouse backup',
  'server/features/backup/commands.ts ./cli.js': 'gatehouse jwt keys and gatehouse backup',
  'server/features/import/cli.ts ./better-auth.js': 'gatehouse import better-auth',
  'server/features/import/better-auth.ts pg': 'PostgreSQL: gatehouse import better-auth (PostgreSQL source)',
  'server/crypto/foreign-hashes.ts bcryptjs': 'gatehouse import users: a bcrypt user signs in',
  'server/crypto/foreign-hashes.ts @node-rs/argon2': 'gatehouse import users: an argon2id user signs in',
  // The browser panel's on-demand renderer build (Vite, external to the bundle, the same pattern as
  // the hosted pages above); the panel tests build the renderer once per run (tests/setup/renderer-build.ts).
  'server/panel/build.ts specifier': 'panel (see tests/setup/renderer-build.ts)',
  'server/features/saml/commands.ts ./cli.js': 'SAML and LDAP: gatehouse saml sp create',
  'server/features/saml/lazy.ts ./protocol.js': 'SAML and LDAP: metadata (the routes, the panel and the cleanup job load the same module)',
  'server/features/ldap/index.ts ./server.js': 'SAML and LDAP: a bind and a search on the LDAP listener',
  'server/features/ldap/index.ts ./directory-index.js': 'SAML and LDAP: the index built once the LDAP listener opens (the search reads it)',
  'server/features/metrics/index.ts ./registry.js': 'metrics (prom-client): the SQLite server serves /metrics',
  'server/features/import/users-file.ts csv-parse': 'imports users with foreign hashes (a CSV file)',
}

/** `import(` expressions of the sources (not `typeof import(` types), as "file specifier". */
function sourceLazyImports(): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const text = readFileSync(path, 'utf8')
        for (const m of text.matchAll(/(typeof\s+)?\bimport\(\s*(?:\/\*[^*]*\*\/\s*)?(?:'([^']+)'|([A-Za-z_$][\w$]*))/g))
          if (!m[1]) found.push(`${relative(root, path)} ${m[2] ?? m[3]}`)
      }
    }
  }
  walk(join(root, 'server'))
  return [...new Set(found)].sort()
}

/** The chunks main.mjs reaches, and which of them (or which packages) are loaded through `import()`. */
function bundleGraph(): { dynamic: Set<string>; packages: Set<string>; files: Set<string> } {
  const files = new Set<string>()
  const dynamic = new Set<string>()
  const packages = new Set<string>()
  const visit = (name: string) => {
    if (files.has(name)) return
    files.add(name)
    const text = readFileSync(join(distDir, name), 'utf8')
    for (const m of text.matchAll(/\bimport\("([^"]+)"\)/g)) {
      const target = m[1] as string
      if (target.startsWith('./')) {
        dynamic.add(target.slice(2))
        visit(target.slice(2))
      } else if (!target.startsWith('node:')) packages.add(target)
    }
    for (const m of text.matchAll(/(?:\bfrom|\bimport)\s*"\.\/([^"]+)"/g)) visit(m[1] as string)
  }
  visit('main.mjs')
  return { dynamic, packages, files }
}

const servers: RunningServer[] = []
async function serve(args: string[], env: Record<string, string> = {}): Promise<{ server: RunningServer; client: HttpClient }> {
  const server = await startServerProcess(['--port', '0', '--panel-port', '0', ...args], { ...traced, ...env }, 60_000)
  servers.push(server)
  return { server, client: new HttpClient(server.url) }
}
async function stop(server: RunningServer): Promise<void> {
  server.child.kill('SIGTERM')
  const { code } = await server.exited
  expect(code, server.output()).toBe(0)
  // No request of a test may have made the server log an error (a 500 logs one).
  expect(server.output()).not.toMatch(/TypeError|ReferenceError|SyntaxError|Error: Cannot find|unexpected error/i)
}

function dataDir(name: string, config: Record<string, unknown> = {}): { dir: string; args: string[] } {
  const dir = join(work, name)
  const configFile = join(work, `${name}.json`)
  writeFileSync(configFile, JSON.stringify(config))
  return { dir, args: ['--data-dir', dir, '--config', configFile] }
}

afterAll(async () => {
  for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL')
  rmSync(work, { recursive: true, force: true })
})

describe('the built server (dist/server/main.mjs through bin/gatehouse.js serve)', () => {
  it('every lazy import( of server/ is listed with the test that runs it on the bundle', () => {
    expect(sourceLazyImports()).toEqual(Object.keys(LAZY_IMPORTS).sort())
  })

  describe('on SQLite, with mail, passwords, passkeys, OIDC and the hosted pages', () => {
    let sink: SmtpSink
    let server: RunningServer
    let client: HttpClient
    const hostedAssets = join(work, 'hosted')

    let ldapPort = 0

    beforeAll(async () => {
      sink = await startSmtpSink()
      ldapPort = await freePort()
      const data = dataDir('sqlite', {
        security: { rejectCommonPasswords: true },
        oidcProvider: { enabled: true },
        // Every optional feature on, so that the route smoke reaches each of them.
        twoFactor: { enabled: true },
        passkey: { enabled: true },
        apiKey: { enabled: true },
        jwt: { enabled: true },
        user: { changeEmail: { enabled: true }, deleteUser: { enabled: true } },
        forwardAuth: { enabled: true, rules: [{ domain: 'app.example.lan', policy: 'signed-in' }] },
        magicLink: { enabled: true },
        emailOTP: { enabled: true, changeEmail: { enabled: true } },
        oneTimeToken: { enabled: true },
        anonymous: { enabled: true },
        multiSession: { enabled: true },
        deviceAuthorization: { enabled: true },
        saml: { enabled: true },
        ldap: { enabled: true, address: `127.0.0.1:${ldapPort}` },
        metrics: { enabled: true, address: '127.0.0.1:0' },
        rateLimit: { enabled: false },
        mail: { from: 'gatehouse@example.com' },
      })
      // An empty hosted-pages folder: the bundle builds the pages itself at the first page request.
      ;({ server, client } = await serve([...data.args, '--smtp-url', sink.url], { GATEHOUSE_HOSTED_ASSETS: hostedAssets }))
    }, 90_000)
    afterAll(async () => {
      if (server) await stop(server)
      await sink?.close()
    })

    it('rejectCommonPasswords: a common password is refused with PASSWORD_TOO_COMMON, a long passphrase signs up', async () => {
      const common = await client.post('/sign-up/email', { name: 'C', email: uniqueEmail(), password: 'password123' })
      expect([common.status, common.body]).toEqual([
        400,
        { code: 'PASSWORD_TOO_COMMON', message: 'Password is too common. Please choose a less guessable one.' },
      ])
      const strong = await client.post<{ user: { email: string } }>('/sign-up/email', {
        name: 'Strong',
        email: uniqueEmail(),
        password: 'orbit lantern quietly seventeen harbor',
      })
      expect(strong.status, strong.text).toBe(200)
      expect(strong.body.user.email).toMatch(/@example\.com$/)
    })

    it('metrics (prom-client, loaded at start only when metrics are on): the SQLite server serves /metrics', async () => {
      await client.get('/ok')
      const address = /Metrics listening on (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(server.output())?.[1]
      expect(address, server.output()).toBeDefined()
      const scrape = await fetch(address as string)
      expect(scrape.status).toBe(200)
      expect(await scrape.text()).toMatch(/^gatehouse_http_requests_total\{/m)
    })

    it('a cookie domain is checked against the Public Suffix List (tldts, required at its first use)', async () => {
      const data = dataDir('cookie-domain', { advanced: { crossSubDomainCookies: { enabled: true, domain: 'co.uk' } } })
      const refused = await runCli(['serve', '--port', '0', '--panel-port', '0', ...data.args], traced)
      expect(refused.code, refused.stdout + refused.stderr).not.toBe(0)
      expect(refused.stderr).toContain('advanced.crossSubDomainCookies.domain: "co.uk" is a public suffix')
    })

    it('gatehouse jwt keys and gatehouse backup: each feature command loads its own code (server/features/commands.ts)', async () => {
      const dir = join(work, 'sqlite')
      const keys = await runCli(['jwt', 'keys', '--data-dir', dir], traced)
      expect(keys.code, keys.stdout + keys.stderr).toBe(0)
      const out = join(work, 'bundle-backup.tar.gz')
      const backup = await runCli(['backup', '--out', out, '--data-dir', dir], traced, 60_000)
      expect(backup.code, backup.stdout + backup.stderr).toBe(0)
      expect(existsSync(out)).toBe(true)
      const help = await runCli(['restore', '--help'], traced)
      expect([help.code, help.stdout]).toEqual([0, expect.stringContaining('Usage: gatehouse backup')])
    })

    it('SMTP delivery (nodemailer): a password-reset mail reaches the SMTP sink', async () => {
      const email = uniqueEmail('mail')
      const user = new HttpClient(server.url)
      expect((await user.post('/sign-up/email', { name: 'M', email, password: 'orbit lantern quietly seventeen harbor' })).status).toBe(200)
      const res = await user.post('/request-password-reset', { email, redirectTo: '/reset' })
      expect(res.status, res.text).toBe(200)
      const mail = await sink.waitFor(email, undefined, 20_000)
      expect(mail.subject).toMatch(/Reset your .* password/)
      expect(mail.text).toContain('/reset-password/')
    })

    it('passkey registration options (@simplewebauthn/server)', async () => {
      const user = new HttpClient(server.url)
      expect(
        (await user.post('/sign-up/email', { name: 'P', email: uniqueEmail(), password: 'orbit lantern quietly seventeen harbor' })).status,
      ).toBe(200)
      const res = await user.get<{ challenge: string; rp: { id: string }; user: { name: string } }>('/passkey/generate-register-options')
      expect(res.status, res.text).toBe(200)
      expect(res.body.challenge).toMatch(/^[A-Za-z0-9_-]{20,}$/)
      expect(res.body.rp.id).toBe('127.0.0.1')
    })

    it('OIDC provider (oidc-provider): discovery, JWKS, and a client-credentials token for a client made by the CLI', async () => {
      const discovery = await client.get<{ issuer: string; jwks_uri: string; token_endpoint: string }>('/.well-known/openid-configuration')
      expect(discovery.status, discovery.text).toBe(200)
      expect(discovery.body.issuer).toBe(server.url)
      const jwks = await fetch(discovery.body.jwks_uri)
      expect(jwks.status).toBe(200)
      expect(((await jwks.json()) as { keys: unknown[] }).keys.length).toBeGreaterThan(0)

      const created = await runCli(
        [
          'oidc',
          'client',
          'create',
          '--name',
          'Bundle',
          '--redirect-uri',
          'https://rp.example.com/cb',
          '--json',
          '--data-dir',
          join(work, 'sqlite'),
        ],
        traced,
      )
      expect(created.code, created.stderr).toBe(0)
      const { clientId, clientSecret } = JSON.parse(created.stdout) as { clientId: string; clientSecret: string }
      const token = await fetch(discovery.body.token_endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        },
        body: 'grant_type=client_credentials',
      })
      const body = (await token.json()) as { access_token?: string; token_type?: string }
      expect(token.status, JSON.stringify(body)).toBe(200)
      expect(body.access_token).toBeTruthy()
    })

    it('SAML and LDAP (xml-crypto, xmldom, the LDAP codec): metadata, an SP made by the CLI, a bind and a search', async () => {
      const metadata = await fetch(`${server.url}/saml/metadata`)
      const xml = await metadata.text()
      expect(metadata.status, xml).toBe(200)
      expect(xml).toContain(`entityID="${server.url}/saml/metadata"`)
      expect(xml).toContain('<ds:X509Certificate>')
      const spFile = join(work, 'sp-metadata.xml')
      writeFileSync(
        spFile,
        `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://sp.example.lan/saml">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example.lan/acs" index="0"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>`,
      )
      const created = await runCli(
        ['saml', 'sp', 'create', '--metadata-file', spFile, '--name', 'Bundle SP', '--json', '--data-dir', join(work, 'sqlite')],
        traced,
      )
      expect(created.code, created.stderr).toBe(0)
      expect(JSON.parse(created.stdout)).toMatchObject({
        name: 'Bundle SP',
        entityId: 'https://sp.example.lan/saml',
        acsUrls: ['https://sp.example.lan/acs'],
      })

      const email = uniqueEmail('bundle-ldap')
      expect((await client.post('/sign-up/email', { email, password: 'a long bundle passphrase', name: 'Bundle Ldap' })).status).toBe(200)
      markVerifiedInDataDir(join(work, 'sqlite'), email)
      const ldap = new Client({ url: `ldap://127.0.0.1:${ldapPort}`, timeout: 5_000, connectTimeout: 5_000 })
      const dn = `uid=${email},ou=people,dc=gatehouse,dc=lan`
      await ldap.bind(dn, 'a long bundle passphrase')
      const { searchEntries } = await ldap.search(dn, { scope: 'base', attributes: ['mail', 'cn'] })
      expect(searchEntries).toEqual([{ dn, mail: email, cn: 'Bundle Ldap' }])
      await ldap.unbind()
    })

    it('hosted pages: the bundle builds them at the first request (Vite) and serves the sign-in page and its assets', async () => {
      const page = await fetch(`${server.url}/ui/sign-in`)
      const html = await page.text()
      expect(page.status, html.slice(0, 300)).toBe(200)
      expect(existsSync(join(hostedAssets, 'index.html'))).toBe(true)
      const asset = /src="\.\/assets\/([^"]+\.js)"/.exec(html)?.[1]
      expect(asset, html).toBeTruthy()
      const js = await fetch(`${server.url}/ui/assets/${asset}`)
      expect(js.status).toBe(200)
      const config = await client.get<{ emailAndPassword: unknown }>('/ui/api/config')
      expect(config.status).toBe(200)
    }, 120_000)

    it('every declared route (the OpenAPI document) answers, anonymous and signed in, never 500 nor "no such route"', async () => {
      const doc = await client.get<{ paths: Record<string, Record<string, unknown>> }>('/open-api/generate-schema')
      expect(doc.status).toBe(200)
      const unknown = await client.get('/no-such-route-at-all')
      expect(unknown.status).toBe(404)
      const user = new HttpClient(server.url)
      expect(
        (await user.post('/sign-up/email', { name: 'S', email: uniqueEmail(), password: 'orbit lantern quietly seventeen harbor' })).status,
      ).toBe(200)
      // Path parameters a route resolves by name (its 404 would read like an unknown route's).
      const page = await (await fetch(`${server.url}/ui/sign-in`)).text()
      const params: Record<string, string> = { page: 'sign-in', file: /src="\.\/assets\/([^"]+)"/.exec(page)?.[1] ?? 'x' }
      const routes = Object.entries(doc.body.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((m) => [m.toUpperCase(), path] as const),
      )
      expect(routes.length).toBeGreaterThan(100)
      const failures: string[] = []
      // Signing out or deleting ends the session the next requests use: those go last.
      const last = (path: string) => /sign-out|delete-user|revoke|stop-impersonating/.test(path)
      const ordered = [...routes.filter(([, p]) => !last(p)), ...routes.filter(([, p]) => last(p))]
      for (const who of [new HttpClient(server.url), user]) {
        for (const [method, template] of ordered) {
          // The hosted account pages have their own names (`/ui/account/apps`).
          const named = template.startsWith('/ui/account/') ? { ...params, page: 'apps' } : params
          const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => named[name] ?? 'x')
          const res = await who.request(method, path, method === 'GET' || method === 'HEAD' ? {} : { body: {} })
          const noRoute = res.status === 404 && res.text === unknown.text
          if (res.status >= 500 || noRoute) failures.push(`${method} ${template}: ${res.status} ${res.text.slice(0, 200)}`)
        }
      }
      expect(failures).toEqual([])
    }, 120_000)
  })

  describe('gatehouse import (bcryptjs, @node-rs/argon2, better-sqlite3)', () => {
    it('imports users with foreign hashes, who then sign in; a foreign better-auth database is refused with the reason', async () => {
      const data = dataDir('import')
      const file = join(work, 'users.json')
      const bcryptHash = await bcrypt.hash('orbit lantern quietly seventeen harbor', 4)
      const argonHash = await argon2Hash('harbor seventeen quietly lantern orbit')
      writeFileSync(
        file,
        JSON.stringify([
          { email: 'bcrypt@example.com', name: 'B', passwordHash: bcryptHash },
          { email: 'argon@example.com', name: 'A', passwordHash: argonHash },
        ]),
      )
      const imported = await runCli(['import', 'users', '--file', file, '--json', '--data-dir', data.dir], traced)
      expect(imported.code, imported.stderr).toBe(0)
      expect(JSON.parse(imported.stdout)).toMatchObject({ users: 2, errors: [] })
      // A CSV file (csv-parse, loaded at the first CSV read).
      const csv = join(work, 'users.csv')
      writeFileSync(csv, 'email,name\ncsv@example.com,C\n')
      const fromCsv = await runCli(['import', 'users', '--file', csv, '--json', '--data-dir', data.dir], traced)
      expect(fromCsv.code, fromCsv.stderr).toBe(0)
      expect(JSON.parse(fromCsv.stdout)).toMatchObject({ users: 1, errors: [] })
      const foreign = join(work, 'not-better-auth.db')
      writeFileSync(foreign, '')
      const refused = await runCli(['import', 'better-auth', '--from', foreign, '--json', '--data-dir', data.dir], traced)
      expect(refused.code, refused.stdout + refused.stderr).toBe(1)
      const { server, client } = await serve(data.args)
      for (const [email, password] of [
        ['bcrypt@example.com', 'orbit lantern quietly seventeen harbor'],
        ['argon@example.com', 'harbor seventeen quietly lantern orbit'],
      ]) {
        const signIn = await client.post('/sign-in/email', { email, password })
        expect(signIn.status, signIn.text).toBe(200)
      }
      await stop(server)
    }, 90_000)
  })

  const noPostgres = postgresUnavailable()
  warnSkipped('the bundle on PostgreSQL (tests/bundle/bundle.test.ts)', noPostgres)
  describe.skipIf(noPostgres)('on PostgreSQL (pg): serve, a CLI command, and gatehouse migrate --to', () => {
    let postgres: PostgresServer
    beforeAll(async () => {
      postgres = await startPostgres()
    }, 60_000)
    afterAll(async () => {
      await postgres?.stop()
    })

    it('serves sign-up, sign-in and get-session from PostgreSQL; `gatehouse user create` writes there too', async () => {
      const url = await postgres.createDatabase('bundle_serve')
      const data = dataDir('pg')
      const created = await runCli(
        [
          'user',
          'create',
          '--email',
          'cli@example.com',
          '--password',
          'orbit lantern quietly seventeen harbor',
          '--name',
          'Cli',
          '--data-dir',
          data.dir,
          '--database-url',
          url,
        ],
        traced,
      )
      // The CLI migrates an empty database itself before writing.
      expect(created.code, created.stderr).toBe(0)
      const { server, client } = await serve([...data.args, '--database-url', url])
      const signIn = await client.post('/sign-in/email', { email: 'cli@example.com', password: 'orbit lantern quietly seventeen harbor' })
      expect(signIn.status, signIn.text).toBe(200)
      const session = await client.get<{ user: { email: string } }>('/get-session')
      expect(session.body.user.email).toBe('cli@example.com')
      await stop(server)
    }, 90_000)

    it('gatehouse import better-auth reads a PostgreSQL source (pg): an empty database is refused with the reason', async () => {
      const url = await postgres.createDatabase('bundle_import_source')
      const data = dataDir('import-pg')
      const refused = await runCli(['import', 'better-auth', '--from', url, '--json', '--data-dir', data.dir], traced, 60_000)
      expect(refused.code, refused.stdout + refused.stderr).toBe(1)
    }, 90_000)

    it('gatehouse migrate --to copies a SQLite data directory into an empty database', async () => {
      const data = dataDir('migrate')
      const { server, client } = await serve(data.args)
      expect(
        (
          await client.post('/sign-up/email', {
            name: 'G',
            email: 'migrated@example.com',
            password: 'orbit lantern quietly seventeen harbor',
          })
        ).status,
      ).toBe(200)
      await stop(server)
      const url = await postgres.createDatabase('bundle_migrate')
      const migrated = await runCli(['migrate', '--to', url, '--data-dir', data.dir], { ...traced, GATEHOUSE_DATABASE_URL: '' }, 60_000)
      expect(migrated.code, migrated.stdout + migrated.stderr).toBe(0)
    }, 90_000)
  })

  const noRedis = redisUnavailable()
  warnSkipped('the bundle with Redis secondary storage (tests/bundle/bundle.test.ts)', noRedis)
  describe.skipIf(noRedis)('with Redis secondary storage (ioredis)', () => {
    it('keeps rate-limit counters in Redis: the limit applies', async () => {
      const redis: RedisServer = await startRedis()
      try {
        const data = dataDir('redis', { rateLimit: { enabled: true, storage: 'secondary-storage', window: 60, max: 3 } })
        const { server, client } = await serve([...data.args, '--redis-url', redis.url])
        const statuses: number[] = []
        for (let i = 0; i < 5; i++)
          statuses.push((await client.post('/sign-in/email', { email: 'nobody@example.com', password: 'wrong-password' })).status)
        expect(statuses).toEqual([401, 401, 401, 429, 429])
        await stop(server)
      } finally {
        await redis.stop()
      }
    })
  })

  it('no chunk the bundle loads through import() exports a bare CommonJS default (esbuild#3245)', () => {
    const { dynamic } = bundleGraph()
    for (const chunk of dynamic)
      expect(readFileSync(join(distDir, chunk), 'utf8'), chunk).not.toMatch(/export default require_\w+\(\);?\s*$/)
  })

  // On another runtime (tests/runtime/other-runtimes.test.ts) better-sqlite3 may be loaded from that runtime's build.
  const redirected = (name: string): string =>
    name === 'better-sqlite3' && process.env.GATEHOUSE_BETTER_SQLITE3
      ? `${pathToFileURL(process.env.GATEHOUSE_BETTER_SQLITE3).href}/`
      : `\0${name}`
  it.skipIf(noPostgres || noRedis)('every chunk the bundle loads through import() was loaded by a server or CLI run above', () => {
    const loaded = readFileSync(traceFile, 'utf8')
    const { dynamic, packages } = bundleGraph()
    expect(dynamic.size).toBeGreaterThan(5)
    const missing = [
      ...[...dynamic].filter((chunk) => !loaded.includes(pathToFileURL(join(distDir, chunk)).href)),
      // A package by name (its directory), or one of its files by path (oidc-provider/lib/helpers/als.js).
      ...[...packages].filter(
        (name) => !loaded.includes(`/node_modules/${name}${name.endsWith('.js') ? '' : '/'}`) && !loaded.includes(redirected(name)),
      ),
    ]
    expect(missing).toEqual([])
  })
})
