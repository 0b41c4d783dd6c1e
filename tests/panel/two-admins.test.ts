import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { axe } from '../helpers/axe.js'
import { verifiedSignUp } from '../helpers/members.js'
import { operatorCall, signedInPage } from '../helpers/panel-session.js'
import { buildRenderer, launchChromium, type PanelHarness, startPanelHarness } from './harness.js'

/**
 * Issue 50 §1 in Chromium, one test per view that saves a managed object: two admins, each signed
 * in in a browser context of their own, both with the view open. Bea saves one field; Ada's stale
 * view saves another: both are kept (the view sent only what Ada changed). Then Ada saves a field
 * Bea changed after Ada read it: refused, and Ada's view shows Bea's value, who and when, beside the
 * field still holding Ada's own value.
 */

const PASSWORD = 'correct horse battery'
let h: PanelHarness
let browser: Browser
const contexts: BrowserContext[] = []
const people = {} as Record<'ada' | 'bea', { id: string; email: string }>
const pages = {} as Record<'ada' | 'bea', Page>

const operator = (op: string, input: unknown) => operatorCall(h.panel, op, input)

beforeAll(async () => {
  const [assets, b] = await Promise.all([buildRenderer(), launchChromium()])
  browser = b
  h = await startPanelHarness(assets, { config: { saml: { enabled: true }, oidcProvider: { enabled: true } } })
  for (const [key, name] of [
    ['ada', 'Ada Admin'],
    ['bea', 'Bea Admin'],
  ] as const) {
    const { user } = await verifiedSignUp(h.server, { name, password: PASSWORD })
    await operator('users.setRole', { userId: user.id, role: 'admin' })
    people[key] = { id: user.id, email: user.email }
    pages[key] = await signedInPage(browser, h.panel, contexts, { email: user.email, password: PASSWORD })
    // Toasts sit bottom right, over the buttons of a dialog.
    await pages[key].addStyleTag({ content: '.mantine-Notifications-root { display: none !important; }' })
  }
}, 180_000)

afterAll(async () => {
  for (const context of contexts) await context.close()
  await browser?.close()
  await h?.close()
})

let loads = 0
async function open(page: Page, view: string, heading: string): Promise<void> {
  await page.goto(`${h.panel.origin}/?load=${++loads}#/${view}`)
  await page.getByRole('heading', { level: 2, name: heading }).waitFor({ timeout: 20_000 })
  await page.addStyleTag({ content: '.mantine-Notifications-root { display: none !important; }' })
}

/** axe with the pointer parked in the corner (a button left under it is measured in its hover colours). */
async function a11y(page: Page, within?: string) {
  await page.mouse.move(0, 0)
  return axe(page, within ? { within } : {})
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
/** The conflict as the view shows it beside a field: who, when, their value. */
const conflictText = (who: 'ada' | 'bea', theirs: unknown) =>
  new RegExp(`^changed by ${escapeRe(people[who].email)} at .+ to ${escapeRe(JSON.stringify(theirs))} since you opened this view$`)

describe('two admins, one view each', () => {
  it('SAML apps: a stale save of the name keeps the other’s groups; saving a name they changed shows theirs beside yours', {
    timeout: 120_000,
  }, async () => {
    const sp = (await operator('saml.createServiceProvider', {
      metadataXml: `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://photos.home.arpa/sp"><SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://photos.home.arpa/acs" index="0"/></SPSSODescriptor></EntityDescriptor>`,
      name: 'Photos',
    })) as { id: string }
    const stored = async () =>
      ((await operator('saml.serviceProviders', {})) as { serviceProviders: Array<{ id: string; name: string; allowedGroups: string[] }> })
        .serviceProviders[0]
    for (const who of ['ada', 'bea'] as const) await open(pages[who], 'saml-apps', 'SAML apps')
    const name = (who: 'ada' | 'bea') => pages[who].getByTestId(`saml-edit-name-${sp.id}`)
    const groups = (who: 'ada' | 'bea') => pages[who].getByTestId(`saml-edit-groups-${sp.id}`)
    const saveAs = (who: 'ada' | 'bea') => pages[who].getByTestId(`saml-edit-save-${sp.id}`).click()

    // Bea restricts it to a group.
    await groups('bea').fill('family')
    await saveAs('bea')
    await expect.poll(async () => (await stored())?.allowedGroups).toEqual(['family'])
    // Ada's view, still showing no groups, renames it: saved, and Bea's groups stay.
    expect(await groups('ada').inputValue()).toBe('')
    await name('ada').fill('Photo library')
    // Meanwhile Bea starts renaming it too, from the name she sees (Photos).
    await expect.poll(() => name('bea').inputValue()).toBe('Photos')
    await name('bea').fill('Family photos')
    await saveAs('ada')
    await expect.poll(stored).toMatchObject({ name: 'Photo library', allowedGroups: ['family'] })

    // Bea saves her name: refused; beside her field (still hers), Ada's name, who and when.
    await saveAs('bea')
    await pages.bea.getByText(conflictText('ada', 'Photo library')).waitFor()
    expect(await name('bea').inputValue()).toBe('Family photos')
    expect(await stored()).toMatchObject({ name: 'Photo library', allowedGroups: ['family'] })
    expect(await a11y(pages.bea)).toEqual([])
  })

  it('OIDC edit dialog: a stale save of the name keeps the other’s consent switch; saving a name they changed shows theirs', {
    timeout: 120_000,
  }, async () => {
    const { client } = (await operator('oidc.createClient', { name: 'Wiki', redirectUris: ['https://wiki.example.com/cb'] })) as {
      client: { clientId: string }
    }
    const id = client.clientId
    const stored = async () =>
      ((await operator('oidc.clients', {})) as { clients: Array<Record<string, unknown>> }).clients.find((c) => c.clientId === id)
    const edit = async (who: 'ada' | 'bea') => {
      await pages[who].getByTestId(`oidc-edit-${id}`).click()
      await pages[who].getByRole('dialog', { name: /^Edit / }).waitFor()
    }
    for (const who of ['ada', 'bea'] as const) {
      await open(pages[who], 'sso', 'Single sign-on')
      await edit(who)
    }
    // Bea skips the consent screen.
    await pages.bea.getByTestId('oidc-edit-skip-consent').check()
    await pages.bea.getByTestId('oidc-edit-save').click()
    await expect.poll(async () => (await stored())?.skipConsent).toBe(true)
    // Ada's dialog, opened before (consent asked), renames it: saved, and Bea's switch stays.
    expect(await pages.ada.getByTestId('oidc-edit-skip-consent').isChecked()).toBe(false)
    await pages.ada.getByTestId('oidc-edit-name').fill('Team wiki')
    await pages.ada.getByTestId('oidc-edit-save').click()
    await expect.poll(stored).toMatchObject({ name: 'Team wiki', skipConsent: true })
    await pages.ada.getByRole('dialog').waitFor({ state: 'detached' })

    // Both open the dialog again (Bea on a fresh load): name Team wiki. Bea renames it; Ada, from
    // the name she read, renames it too: refused, and Bea's name shows beside Ada's own.
    await edit('ada')
    await open(pages.bea, 'sso', 'Single sign-on')
    await edit('bea')
    expect(await pages.bea.getByTestId('oidc-edit-name').inputValue()).toBe('Team wiki')
    await pages.bea.getByTestId('oidc-edit-name').fill('Bea wiki')
    await pages.bea.getByTestId('oidc-edit-save').click()
    await expect.poll(async () => (await stored())?.name).toBe('Bea wiki')
    await pages.ada.getByTestId('oidc-edit-name').fill('Ada wiki')
    await pages.ada.getByTestId('oidc-edit-save').click()
    const dialog = pages.ada.getByRole('dialog', { name: /^Edit / })
    await dialog.getByText(conflictText('bea', 'Bea wiki')).waitFor()
    expect(await pages.ada.getByTestId('oidc-edit-name').inputValue()).toBe('Ada wiki')
    expect(await stored()).toMatchObject({ name: 'Bea wiki', skipConsent: true })
    expect(await a11y(pages.ada, '[role="dialog"]')).toEqual([])
  })

  it('Protected apps: a stale save of the switch keeps the other’s default policy; saving a policy they changed shows theirs', {
    timeout: 120_000,
  }, async () => {
    const stored = () => h.server.gatehouse.config.get().forwardAuth
    const policy = async (who: 'ada' | 'bea', label: string) => {
      await pages[who].getByTestId('forward-auth-default-policy').click()
      await pages[who].getByRole('option', { name: label, exact: true }).click()
    }
    const saveAs = (who: 'ada' | 'bea') => pages[who].getByTestId('forward-auth-save').click()
    for (const who of ['ada', 'bea'] as const) await open(pages[who], 'protected-apps', 'Protected apps')
    // Bea: anyone signed in when no rule matches.
    await policy('bea', 'Signed in')
    await saveAs('bea')
    await expect.poll(() => stored().defaultPolicy).toBe('signed-in')
    // Ada's view (still showing Deny) switches forward auth on: saved, Bea's policy stays.
    expect(await pages.ada.getByTestId('forward-auth-default-policy').inputValue()).toBe('Deny')
    await pages.ada.getByLabel('Forward auth enabled').click()
    await saveAs('ada')
    await expect.poll(stored).toMatchObject({ enabled: true, defaultPolicy: 'signed-in' })
    // Both read it again (Ada's view did after her save); Bea asks for a second factor, Ada,
    // from the policy she read, lets everyone through: refused, Bea's policy beside Ada's choice.
    await expect.poll(() => pages.ada.getByTestId('forward-auth-default-policy').inputValue()).toBe('Signed in')
    await policy('bea', 'Signed in with a second factor')
    await saveAs('bea')
    await expect.poll(() => stored().defaultPolicy).toBe('two-factor')
    await policy('ada', 'Bypass (no sign-in)')
    await saveAs('ada')
    await pages.ada.getByText(conflictText('bea', 'two-factor')).waitFor()
    expect(await pages.ada.getByTestId('forward-auth-default-policy').inputValue()).toBe('Bypass (no sign-in)')
    expect(stored()).toMatchObject({ enabled: true, defaultPolicy: 'two-factor' })
    expect(await a11y(pages.ada)).toEqual([])
  })

  it('Email templates: a stale save of the subject keeps the other’s body; saving a body they changed shows theirs', {
    timeout: 120_000,
  }, async () => {
    const stored = () => h.server.gatehouse.config.get().mail.templates.verification
    for (const who of ['ada', 'bea'] as const) {
      await open(pages[who], 'email', 'Email')
      await pages[who].getByRole('tab', { name: 'Templates' }).click()
      await pages[who].getByTestId('template-kind').click()
      await pages[who].getByRole('option', { name: 'verification', exact: true }).click()
      await expect.poll(() => pages[who].getByTestId('template-subject').inputValue()).toBe('Verify your email address for {{appName}}')
    }
    const builtInBody = await pages.ada.getByTestId('template-body').inputValue()
    await pages.bea.getByTestId('template-body').fill('Hello {{greeting}}\n\n{{message}}')
    await pages.bea.getByTestId('template-save').click()
    await expect.poll(() => stored()?.body).toBe('Hello {{greeting}}\n\n{{message}}')
    // Ada's editor: the subject only. Saved, and Bea's body stays.
    await pages.ada.getByTestId('template-subject').fill('Confirm your address for {{appName}}')
    await pages.ada.getByTestId('template-save').click()
    await expect.poll(stored).toEqual({ subject: 'Confirm your address for {{appName}}', body: 'Hello {{greeting}}\n\n{{message}}' })
    // Bea edits the body again; Ada, from the body she read, edits it too: refused, Bea's beside hers.
    await expect.poll(() => pages.bea.getByTestId('template-body').inputValue()).toBe('Hello {{greeting}}\n\n{{message}}')
    await pages.ada.getByTestId('template-body').fill(`${builtInBody}\n\nThanks`)
    await pages.bea.getByTestId('template-body').fill('Hi {{greeting}}\n\n{{message}}')
    await pages.bea.getByTestId('template-save').click()
    await expect.poll(() => stored()?.body).toBe('Hi {{greeting}}\n\n{{message}}')
    await pages.ada.getByTestId('template-save').click()
    await pages.ada.getByText(conflictText('bea', 'Hi {{greeting}}\n\n{{message}}')).waitFor()
    expect(await pages.ada.getByTestId('template-body').inputValue()).toBe(`${builtInBody}\n\nThanks`)
    expect(stored()?.body).toBe('Hi {{greeting}}\n\n{{message}}')
    expect(await a11y(pages.ada)).toEqual([])
  })
  it('Organizations: a stale rename of the slug keeps the other’s name; renaming over their name shows theirs', {
    timeout: 120_000,
  }, async () => {
    const { organization } = (await operator('orgs.create', { name: 'Family', slug: 'family', ownerUserId: people.ada.id })) as {
      organization: { id: string }
    }
    const stored = async () =>
      ((await operator('orgs.get', { organizationId: organization.id })) as { organization: { name: string; slug: string } }).organization
    const rename = async (who: 'ada' | 'bea') => {
      await pages[who].getByTestId('org-rename').click()
      await pages[who].getByTestId('org-rename-name').waitFor()
    }
    for (const who of ['ada', 'bea'] as const) {
      await open(pages[who], 'organizations', 'Organizations')
      await pages[who].getByTestId('org-row-family').click()
      await rename(who)
    }
    // Bea renames it; Ada's dialog, opened before, changes the slug: both kept.
    await pages.bea.getByTestId('org-rename-name').fill('The family')
    await pages.bea.getByTestId('org-rename-save').click()
    await expect.poll(async () => (await stored()).name).toBe('The family')
    expect(await pages.ada.getByTestId('org-rename-name').inputValue()).toBe('Family')
    await pages.ada.getByTestId('org-rename-slug').fill('household')
    await pages.ada.getByTestId('org-rename-save').click()
    await expect.poll(stored).toMatchObject({ name: 'The family', slug: 'household' })
    await pages.ada.getByTestId('org-rename-name').waitFor({ state: 'detached' })

    // Both open the dialog again; Bea renames it, then Ada, from the name she read: refused.
    await rename('ada')
    await expect.poll(() => pages.ada.getByTestId('org-rename-name').inputValue()).toBe('The family')
    await rename('bea')
    await pages.bea.getByTestId('org-rename-name').fill('Our family')
    await pages.bea.getByTestId('org-rename-save').click()
    await expect.poll(async () => (await stored()).name).toBe('Our family')
    await pages.ada.getByTestId('org-rename-name').fill('Ada’s family')
    await pages.ada.getByTestId('org-rename-save').click()
    await pages.ada.getByText(conflictText('bea', 'Our family')).waitFor()
    expect(await pages.ada.getByTestId('org-rename-name').inputValue()).toBe('Ada’s family')
    expect(await stored()).toMatchObject({ name: 'Our family', slug: 'household' })
    expect(await a11y(pages.ada, '[role="dialog"]')).toEqual([])
  })
  it('Providers: a stale save of the switch keeps the other’s client id; saving a client id they changed shows theirs', {
    timeout: 120_000,
  }, async () => {
    await operator('providers.update', {
      id: 'github',
      enabled: false,
      clientId: 'gh-1',
      scopes: [],
      trustedForLinking: false,
      overrides: {},
    })
    const stored = () => h.server.gatehouse.config.get().socialProviders.github
    const clientId = (who: 'ada' | 'bea') => pages[who].getByTestId('provider-github-client-id')
    const saveAs = (who: 'ada' | 'bea') => pages[who].getByTestId('provider-github-save').click()
    for (const who of ['ada', 'bea'] as const) {
      await open(pages[who], 'providers', 'Providers')
      await pages[who].getByTestId('provider-github-configure').click()
      await expect.poll(() => clientId(who).inputValue()).toBe('gh-1')
    }
    // Bea pastes a new client id; Ada's drawer (still showing gh-1) turns sign-in on: both kept.
    await clientId('bea').fill('gh-2')
    await saveAs('bea')
    await expect.poll(() => stored()?.clientId).toBe('gh-2')
    await pages.ada.getByTestId('provider-github-enabled').click()
    await saveAs('ada')
    await expect.poll(stored).toMatchObject({ enabled: true, clientId: 'gh-2' })
    // Each drawer now shows what is stored. Bea pastes another; Ada, from gh-2, pastes hers: refused.
    await expect.poll(() => clientId('ada').inputValue()).toBe('gh-2')
    await clientId('bea').fill('gh-3')
    await saveAs('bea')
    await expect.poll(() => stored()?.clientId).toBe('gh-3')
    await clientId('ada').fill('gh-ada')
    await saveAs('ada')
    await pages.ada.getByText(conflictText('bea', 'gh-3')).waitFor()
    expect(await clientId('ada').inputValue()).toBe('gh-ada')
    expect(stored()).toMatchObject({ enabled: true, clientId: 'gh-3' })
    expect(await a11y(pages.ada, '[role="dialog"]')).toEqual([])
  })
  it('Generic OAuth providers: a stale save of the name keeps the other’s client id; saving a client id they changed shows theirs', {
    timeout: 120_000,
  }, async () => {
    await operator('genericOAuth.save', {
      providerId: 'corp',
      name: 'Corp SSO',
      authorizationUrl: 'https://idp.example.com/authorize',
      tokenUrl: 'https://idp.example.com/token',
      clientId: 'corp-1',
      scopes: ['openid'],
      pkce: true,
    })
    const stored = () => h.server.gatehouse.config.get().genericOAuth.config.find((p) => p.providerId === 'corp')
    const drawer = (who: 'ada' | 'bea') => pages[who].getByTestId('generic-provider-drawer')
    const field = (who: 'ada' | 'bea', label: RegExp) => drawer(who).getByLabel(label)
    const saveAs = (who: 'ada' | 'bea') => drawer(who).getByRole('button', { name: 'Save' }).click()
    for (const who of ['ada', 'bea'] as const) {
      await open(pages[who], 'providers', 'Providers')
      await pages[who].getByRole('button', { name: 'Configure Corp SSO' }).click()
      await expect.poll(() => field(who, /^Client id/).inputValue()).toBe('corp-1')
    }
    // Bea pastes a new client id; Ada's drawer (still showing corp-1) renames the button: both kept.
    await field('bea', /^Client id/).fill('corp-2')
    await saveAs('bea')
    await expect.poll(() => stored()?.clientId).toBe('corp-2')
    await field('ada', /^Button name/).fill('Corporate sign-in')
    await saveAs('ada')
    await expect.poll(stored).toMatchObject({ name: 'Corporate sign-in', clientId: 'corp-2' })
    // Each drawer now shows what is stored. Bea pastes another; Ada, from corp-2, pastes hers: refused.
    await expect.poll(() => field('ada', /^Client id/).inputValue()).toBe('corp-2')
    await field('bea', /^Client id/).fill('corp-3')
    await saveAs('bea')
    await expect.poll(() => stored()?.clientId).toBe('corp-3')
    await field('ada', /^Client id/).fill('corp-ada')
    await saveAs('ada')
    await drawer('ada').getByText(conflictText('bea', 'corp-3')).waitFor()
    expect(await field('ada', /^Client id/).inputValue()).toBe('corp-ada')
    expect(stored()).toMatchObject({ name: 'Corporate sign-in', clientId: 'corp-3' })
    expect(await a11y(pages.ada, '[data-testid="generic-provider-drawer"]')).toEqual([])
  })
})
