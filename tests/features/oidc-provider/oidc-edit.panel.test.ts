import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, registeredClientRow } from '../../../server/features/oidc-provider/clients.js'
import { findClient, upsertRegisteredClient } from '../../../server/features/oidc-provider/store.js'
import { type Apache, apacheMissing as missing, docRecipe, startApache, writeApacheConfig, writeEnvCgi } from '../../helpers/apache.js'
import { axe } from '../../helpers/axe.js'
import { freePort, warnSkipped } from '../../helpers/engines.js'
import { buildHostedPages } from '../../helpers/hosted.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { callFromPage } from '../../helpers/panel-session.js'
import { TestClock } from '../../helpers/server.js'
import { buildRenderer, launchChromium, type PanelHarness, screenshot, startPanelHarness } from '../../panel/harness.js'

/**
 * Issue 50 §4: an OIDC client edited in the panel's form (name, redirect URIs, back-channel logout
 * URI, grant types, subject type), in real Chromium at 1366 px against the real server: the stored
 * client changes, the list shows the back-channel URI and every Kind badge whole, the dialog
 * passes axe in light and dark. Then a real relying party, Apache httpd with Debian's
 * mod_auth_openidc set up by docs/SSO.md's block: its client was registered with a wrong redirect
 * URI, so its sign-in is refused; the redirect URI is corrected in the form, and it signs in.
 */

const apacheMissing = missing({
  'mod_auth_openidc.so': 'mod_auth_openidc is not installed (Debian: libapache2-mod-auth-openidc)',
  'mod_cgi.so': 'mod_cgi is not installed (Debian: apache2)',
})
warnSkipped('tests/features/oidc-provider/oidc-edit.panel.test.ts: mod_auth_openidc after an edit in the panel', apacheMissing)

let h: PanelHarness
let browser: Browser
let context: BrowserContext
let page: Page
let hosted: string
let work: string | undefined
let apache: Apache | undefined

/** The width the issue names: a 1366 px laptop screen. */
const VIEWPORT = { width: 1366, height: 768 }

async function pageIn(colorScheme: 'light' | 'dark'): Promise<{ context: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport: VIEWPORT, timezoneId: 'UTC', locale: 'en-GB', colorScheme })
  const p = await ctx.newPage()
  p.setDefaultTimeout(20_000)
  await p.goto(h.panel.loginURL)
  await p.getByRole('heading', { level: 2 }).first().waitFor()
  return { context: ctx, page: p }
}

let loads = 0
async function openSso(p: Page): Promise<void> {
  await p.goto(`${h.panel.origin}/?load=${++loads}#/sso`)
  await p.getByRole('heading', { level: 2, name: 'Single sign-on' }).waitFor()
  await p.getByTestId('oidc-clients').waitFor()
}

beforeAll(async () => {
  const [assets, chromium, hostedDir, port] = await Promise.all([buildRenderer(), launchChromium(), buildHostedPages(), freePort()])
  browser = chromium
  hosted = hostedDir
  process.env.GATEHOUSE_HOSTED_ASSETS = hosted
  // mod_auth_openidc checks the tokens' iat and exp against the wall clock: the server's is near it.
  h = await startPanelHarness(assets, {
    port,
    baseURL: `http://127.0.0.1:${port}`,
    clock: new TestClock(Date.now()),
    config: { oidcProvider: { enabled: true } },
  })
  ;({ context, page } = await pageIn('light'))
}, 180_000)

afterAll(async () => {
  await apache?.stop()
  await context?.close()
  await browser?.close()
  await h?.close()
  delete process.env.GATEHOUSE_HOSTED_ASSETS
  for (const dir of [work, hosted]) if (dir) rmSync(dir, { recursive: true, force: true })
}, 60_000)

/** Every badge of the Kind column shows its whole text (none cut to a few letters and an ellipsis). */
async function cutBadges(p: Page): Promise<string[]> {
  return p.locator('[data-testid^="oidc-kind-"] .mantine-Badge-root').evaluateAll((badges) =>
    badges.flatMap((badge) => {
      const label = badge.querySelector('.mantine-Badge-label') as HTMLElement
      const cut =
        badge.scrollWidth > badge.clientWidth + 1 ||
        label.scrollWidth > label.clientWidth + 1 ||
        label.scrollHeight > label.clientHeight + 1
      return cut ? [`${badge.textContent} (${label.clientWidth}px of ${label.scrollWidth}px)`] : []
    }),
  )
}

describe('OIDC client edit form (issue 50 §4)', () => {
  it('edits a client’s name, redirect URIs, back-channel URI and grants; the list at 1366 px shows it whole; axe light and dark', {
    timeout: 120_000,
  }, async () => {
    const ctx = h.server.gatehouse.ctx
    const { client, clientSecret } = await createClient(
      ctx,
      {
        name: 'Wiki',
        redirectUris: ['https://wiki.example.com/callback'],
        skipConsent: true,
        requirePar: true,
        subjectType: 'pairwise',
        backchannelLogoutUri: 'https://wiki.example.com/logout',
      },
      { via: 'cli' },
    )
    await createClient(ctx, { name: 'Phone app', redirectUris: ['com.example.app:/callback'], public: true }, { via: 'cli' })
    await createClient(
      ctx,
      {
        name: 'A service with a rather long name to squeeze the table',
        redirectUris: ['https://a-very-long-host-name-for-a-service.internal.example.com/oauth2/callback/with/a/long/path'],
        pkceRequired: false,
      },
      { via: 'cli' },
    )
    // A self-registered one: its badge names the token (the longest of the column). It registered
    // as a machine client (client credentials only), which no admin form offers.
    await upsertRegisteredClient(
      ctx,
      registeredClientRow(
        'selfregisteredtool000001',
        {
          client_name: 'Self-registered tool',
          redirect_uris: ['https://tool.example.com/cb'],
          token_endpoint_auth_method: 'client_secret_basic',
          grant_types: ['client_credentials'],
          response_types: [],
        },
        undefined,
        'regtoken-0123456789abcdef',
        new Date(h.server.clock.now()),
      ),
    )
    await openSso(page)
    // Toasts sit bottom right, over the list's last rows.
    await page.addStyleTag({ content: '.mantine-Notifications-root { display: none !important; }' })
    expect(await page.evaluate(() => window.innerWidth)).toBe(1366)
    const badges = await page.locator('[data-testid^="oidc-kind-"] .mantine-Badge-root').count()
    expect(badges).toBeGreaterThanOrEqual(10)
    expect(await cutBadges(page)).toEqual([])
    await screenshot(page, 'oidc-clients-1366')
    // The back-channel URI is on the page, not only in a tooltip.
    expect(await page.getByTestId(`oidc-backchannel-${client.clientId}`).innerText()).toContain('https://wiki.example.com/logout')

    await page.getByTestId(`oidc-edit-${client.clientId}`).click()
    const dialog = page.getByRole('dialog', { name: 'Edit Wiki' })
    await dialog.waitFor()
    expect(await page.getByTestId('oidc-edit-name').inputValue()).toBe('Wiki')
    expect(await page.getByTestId('oidc-edit-redirect-uris').inputValue()).toBe('https://wiki.example.com/callback')
    expect(await page.getByTestId('oidc-edit-backchannel-uri').inputValue()).toBe('https://wiki.example.com/logout')
    expect(await page.getByTestId('oidc-edit-kind').innerText()).toContain('Confidential client')
    expect(await page.getByTestId('oidc-edit-save').isDisabled()).toBe(true)
    expect(await axe(page, { within: '[role="dialog"]' })).toEqual([])
    await screenshot(page, 'oidc-client-edit')

    // A pairwise client's redirect URIs name one host: refused beside the field, as at creation.
    await page.getByTestId('oidc-edit-redirect-uris').fill('https://wiki.example.com/callback\nhttps://docs.example.com/callback')
    await page.getByTestId('oidc-edit-save').click()
    await dialog.getByText('A pairwise client’s redirect URIs must all name one host (its sector)').waitFor()
    expect((await findClient(ctx, client.clientId))?.redirectUris).toEqual(['https://wiki.example.com/callback'])

    await page.getByTestId('oidc-edit-name').fill('Team wiki')
    await page.getByTestId('oidc-edit-redirect-uris').fill('https://wiki.example.com/oidc/callback\nhttps://wiki.example.com/oidc/mobile')
    await page.getByTestId('oidc-edit-backchannel-uri').fill('https://wiki.example.com/oidc/backchannel?logout=1')
    await page.getByTestId('oidc-edit-post-logout-uris').fill('https://wiki.example.com/')
    await page.getByTestId('oidc-edit-grant-client-credentials').click()
    await page.getByTestId('oidc-edit-require-par').click()
    await page.getByTestId('oidc-edit-save').click()
    await dialog.waitFor({ state: 'detached' })
    await expect.poll(async () => (await findClient(ctx, client.clientId))?.name).toBe('Team wiki')
    const stored = await findClient(ctx, client.clientId)
    expect(stored).toMatchObject({
      redirectUris: ['https://wiki.example.com/oidc/callback', 'https://wiki.example.com/oidc/mobile'],
      postLogoutRedirectUris: ['https://wiki.example.com/'],
      backchannelLogoutUri: 'https://wiki.example.com/oidc/backchannel?logout=1',
      requirePar: false,
      // What was not touched stays.
      skipConsent: true,
      subjectType: 'pairwise',
      pkceRequired: true,
    })
    // The panel's own answer: the grants as edited.
    const listed = (await callFromPage(page, 'oidc.clients', {})).body as unknown as {
      clients: Array<{ clientId: string; grantTypes: string[] }>
    }
    expect(listed.clients.find((c) => c.clientId === client.clientId)?.grantTypes).toEqual(['authorization_code', 'refresh_token'])
    // The client-credentials grant is now refused to it at the token endpoint.
    const token = await fetch(`${h.server.base}/oauth2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.clientId}:${clientSecret}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    })
    expect(token.status).toBe(400)
    // (oidc-provider's answer: invalid_request.)
    expect(await token.json()).toEqual({
      error: 'invalid_request',
      error_description: 'requested grant type is not allowed for this client',
    })
    await page.getByTestId('oidc-clients').getByText('Team wiki').waitFor()
    expect(await page.getByTestId(`oidc-backchannel-${client.clientId}`).innerText()).toContain(
      'https://wiki.example.com/oidc/backchannel?logout=1',
    )
    expect(await cutBadges(page)).toEqual([])

    // Renaming the self-registered client leaves its grants as it registered them.
    await page.getByTestId('oidc-edit-selfregisteredtool000001').click()
    await page.getByRole('dialog', { name: 'Edit Self-registered tool' }).waitFor()
    await page.getByTestId('oidc-edit-name').fill('Registered tool')
    await page.getByTestId('oidc-edit-save').click()
    await page.getByRole('dialog', { name: 'Edit Self-registered tool' }).waitFor({ state: 'detached' })
    await expect.poll(async () => (await findClient(ctx, 'selfregisteredtool000001'))?.name).toBe('Registered tool')
    const after = (await callFromPage(page, 'oidc.clients', {})).body as unknown as {
      clients: Array<{ clientId: string; grantTypes: string[] }>
    }
    expect(after.clients.find((c) => c.clientId === 'selfregisteredtool000001')?.grantTypes).toEqual(['client_credentials'])

    // The dialog in dark mode: axe too.
    const dark = await pageIn('dark')
    try {
      await openSso(dark.page)
      await dark.page.getByTestId(`oidc-edit-${client.clientId}`).click()
      await dark.page.getByRole('dialog', { name: 'Edit Team wiki' }).waitFor()
      expect(await dark.page.evaluate(() => document.documentElement.getAttribute('data-mantine-color-scheme'))).toBe('dark')
      expect(await axe(dark.page, { within: '[role="dialog"]' })).toEqual([])
      expect(await cutBadges(dark.page)).toEqual([])
    } finally {
      await dark.context.close()
    }
  })

  it.skipIf(apacheMissing)(
    'mod_auth_openidc is refused with a wrong redirect URI and signs in once the form corrected it',
    {
      timeout: 150_000,
    },
    async () => {
      const ctx = h.server.gatehouse.ctx
      work = mkdtempSync(join(tmpdir(), 'gatehouse-openidc-edit-'))
      const appPort = await freePort()
      const app = `http://127.0.0.1:${appPort}`
      const { client, clientSecret } = await createClient(
        ctx,
        { name: 'Intranet', redirectUris: [`${app}/wrong/redirect_uri`], postLogoutRedirectUris: [`${app}/`] },
        { via: 'cli' },
      )
      writeConfig(app, appPort, client.clientId, clientSecret as string)
      apache = await startApache(work, [`${app}/`])

      const person = await verifiedSignUp(h.server, { name: 'Ada Lovelace' })
      const rp = await browser.newContext({ locale: 'en-GB' })
      try {
        const p = await rp.newPage()
        p.setDefaultTimeout(30_000)
        // Refused: Gatehouse does not send the browser to a redirect URI the client does not have.
        const refused = await p.goto(`${app}/protected/env`)
        expect(new URL(p.url()).origin).toBe(h.server.origin)
        // Gatehouse's error page says why.
        expect(refused?.status()).toBe(200)
        const shown = new URL(p.url())
        expect(shown.pathname).toBe('/api/auth/ui/error')
        expect(shown.searchParams.get('error')).toBe('invalid_redirect_uri')
        await p.getByText("redirect_uri did not match any of the client's registered redirect_uris").waitFor()
        expect(readFileSync(join(work, 'logs', 'access.log'), 'utf8')).not.toContain('/protected/redirect_uri')

        // Corrected in the panel's form.
        await openSso(page)
        await page.getByTestId(`oidc-edit-${client.clientId}`).click()
        await page.getByRole('dialog', { name: 'Edit Intranet' }).waitFor()
        await page.getByTestId('oidc-edit-redirect-uris').fill(`${app}/protected/redirect_uri`)
        await page.getByTestId('oidc-edit-save').click()
        await page.getByRole('dialog', { name: 'Edit Intranet' }).waitFor({ state: 'detached' })
        await expect.poll(async () => (await findClient(ctx, client.clientId))?.redirectUris).toEqual([`${app}/protected/redirect_uri`])

        // Signs in: the sign-in page, consent, back at the protected page with the person's claims.
        const target = `${app}/protected/env`
        await p.goto(target)
        await p.waitForURL(/\/api\/auth\/ui\/sign-in/)
        await p.getByLabel(/^Email or username/).fill(person.email)
        await p.getByLabel(/^Password/).fill(person.password)
        await p.getByRole('button', { name: 'Sign in', exact: true }).click()
        await p.waitForURL((url) => url.href === target || url.pathname.endsWith('/ui/consent'))
        if (p.url().includes('/ui/consent')) {
          await p.getByRole('button', { name: 'Allow' }).click()
          await p.waitForURL(target)
        }
        const env = await p.locator('body').innerText()
        expect(env).toContain(`REMOTE_USER=${person.email}`)
        expect(env).toContain('OIDC_CLAIM_name=Ada Lovelace')
      } finally {
        await rp.close()
      }
    },
  )
})

/** Apache's configuration: one virtual host on loopback with docs/SSO.md's mod_auth_openidc block, placeholders filled. */
function writeConfig(app: string, port: number, clientId: string, secret: string): void {
  const dir = work as string
  const block = docRecipe('SSO.md', 'openidc-apache')
    .replaceAll('https://auth.example.com/api/auth', h.server.base)
    .replaceAll('https://app.example.com', app)
    .replace('CLIENT_ID', clientId)
    .replace('CLIENT_SECRET', secret)
    .replace('A_LONG_RANDOM_PASSPHRASE', randomBytes(24).toString('base64url'))
    .replace('/var/cache/apache2/mod_auth_openidc/cache', join(dir, 'cache'))
  for (const sub of ['cache', 'htdocs']) mkdirSync(join(dir, sub), { recursive: true })
  writeFileSync(join(dir, 'htdocs', 'index.html'), '<!doctype html><title>home</title><p>home</p>\n')
  writeEnvCgi(dir, 'echo "REMOTE_USER=$REMOTE_USER"\nenv | grep \'^OIDC_CLAIM_\' | sort\n')
  writeFileSync(join(dir, 'openidc.conf'), block)
  writeApacheConfig(dir, {
    modules: [
      ['mime_module', 'mod_mime.so'],
      ['dir_module', 'mod_dir.so'],
      ['auth_openidc_module', 'mod_auth_openidc.so'],
    ],
    lines: [
      'TypesConfig /etc/mime.types',
      'DirectoryIndex index.html',
      `Listen 127.0.0.1:${port}`,
      `<VirtualHost 127.0.0.1:${port}>`,
      `    DocumentRoot "${dir}/htdocs"`,
      `    CustomLog "${dir}/logs/access.log" "%m %U%q %>s"`,
      `    ScriptAlias /protected/env "${dir}/cgi/env.cgi"`,
      '    Include openidc.conf',
      '</VirtualHost>',
    ],
  })
}
