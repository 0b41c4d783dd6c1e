import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { axe } from '../../helpers/axe.js'
import { freePort } from '../../helpers/engines.js'
import { type StartupPanel, startStartupPanel } from './startup-panel.js'

/**
 * Issue 50 §3: start-up values in the views that edit keys of their own (LDAP, Single sign-on's
 * groups, registration and provider switches, the Overview's two-factor enforcement and sign-up,
 * Metrics), not only in Settings. The real `gatehouse serve` process started with a config file
 * named by GATEHOUSE_CONFIG (ldap.baseDN, groups.teams, oidcProvider.registration.enabled,
 * twoFactor.enforcement.gracePeriod, signUp.mode) and GATEHOUSE_METRICS_ADDRESS; each view shows the
 * badge naming the source, the field read-only (focusable, described by the reason), and a save of
 * another field of the same view succeeds and leaves the start-up value in effect and unstored.
 */

let configFile: string
let metricsAddress: string
let h: StartupPanel
let page: Page

const FILE_SOURCE = () => `the config file ${configFile} (GATEHOUSE_CONFIG)`

type Settings = {
  effective: Record<string, Record<string, unknown>>
  stored: Record<string, Record<string, unknown> | undefined>
}
const settings = async () => (await h.op('settings.get')).body as unknown as Settings

/** A field set at start-up: read-only yet focusable, typing changes nothing, described by the reason naming the source. */
async function expectStartupField(testId: string, source: string): Promise<void> {
  const field = page.getByTestId(testId)
  expect(await field.isEditable(), testId).toBe(false)
  expect(await field.isDisabled(), testId).toBe(false)
  expect(await h.describedText(testId)).toContain(`Set at start-up by ${source}`)
  const before = await field.inputValue()
  await field.focus()
  expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe(testId)
  await page.keyboard.type('x')
  expect(await field.inputValue()).toBe(before)
}

/** A switch set at start-up: says it is read-only, and neither a click nor Space changes it or asks the server anything. */
async function expectStartupSwitch(testId: string, source: string, checked: boolean): Promise<void> {
  const toggle = page.getByTestId(testId)
  expect(await toggle.getAttribute('aria-readonly'), testId).toBe('true')
  expect(await h.describedText(testId)).toContain(`Set at start-up by ${source}`)
  expect(await toggle.isChecked()).toBe(checked)
  const saves: string[] = []
  const seen = (request: { url(): string }) => {
    if (/\/panel\/api\/[^/]*configure/.test(request.url())) saves.push(request.url())
  }
  page.on('request', seen)
  await toggle.click({ force: true })
  await toggle.focus()
  await page.keyboard.press('Space')
  // A round trip after the clicks: a save they started would have been sent before it.
  await h.op('server.info')
  page.off('request', seen)
  expect(saves, testId).toEqual([])
  expect(await toggle.isChecked()).toBe(checked)
  expect(await page.getByTestId('error-notice').count()).toBe(0)
}

beforeAll(async () => {
  metricsAddress = `127.0.0.1:${await freePort()}`
  h = await startStartupPanel('gatehouse-startup-views-', (dir) => {
    configFile = join(dir, 'startup.json')
    writeFileSync(
      configFile,
      JSON.stringify({
        ldap: { baseDN: 'dc=startup,dc=lan' },
        groups: { teams: false },
        oidcProvider: { registration: { enabled: true } },
        twoFactor: { enabled: true, enforcement: { gracePeriod: 172_800 } },
        signUp: { mode: 'open' },
      }),
    )
    return {
      args: ['--data-dir', join(dir, 'data'), '--rate-limit', 'off'],
      env: { GATEHOUSE_CONFIG: configFile, GATEHOUSE_METRICS_ADDRESS: metricsAddress },
    }
  })
  page = h.page
}, 180_000)

afterAll(() => h?.close())

describe('start-up badges in the views that edit keys', () => {
  it('LDAP: the base DN of the config file read-only with the badge and the reason; saving another field works', {
    timeout: 90_000,
  }, async () => {
    await h.open('ldap', 'LDAP')
    const form = page.getByTestId('ldap-form')
    const badge = form.getByTestId('startup-badge')
    await badge.waitFor()
    expect(await badge.count()).toBe(1)
    expect(await badge.getAttribute('data-source')).toBe(FILE_SOURCE())
    expect(await page.getByTestId('ldap-baseDN').inputValue()).toBe('dc=startup,dc=lan')
    await expectStartupField('ldap-baseDN', FILE_SOURCE())
    expect(await axe(page), 'LDAP view').toEqual([])

    const idle = page.getByTestId('ldap-idleTimeout')
    const next = Number(await idle.inputValue()) + 120
    await idle.fill(String(next))
    await page.getByTestId('ldap-save').click()
    await page.getByText('The LDAP settings apply now.').waitFor({ timeout: 15_000 })
    const after = await settings()
    expect(after.effective.ldap).toMatchObject({ idleTimeout: next, baseDN: 'dc=startup,dc=lan' })
    expect(after.stored.ldap).toEqual({ idleTimeout: next })
  })

  it('Single sign-on: the groups and registration switches set at start-up are read-only with the badge; another switch saves', {
    timeout: 90_000,
  }, async () => {
    await h.open('sso', 'Single sign-on')
    await page.getByTestId('oidc-groups-teams').waitFor({ state: 'attached' })
    await expectStartupSwitch('oidc-groups-teams', FILE_SOURCE(), false)
    await page.getByTestId('oidc-registration').getByTestId('startup-badge').waitFor()
    await expectStartupSwitch('oidc-registration-enabled', FILE_SOURCE(), true)
    expect(await axe(page), 'Single sign-on view').toEqual([])

    // A switch the panel may set still saves, and the start-up ones stay as they are.
    await page.getByTestId('oidc-groups-roles').click({ force: true })
    await expect.poll(async () => (await h.op('groups.settings')).body.roles, { timeout: 15_000 }).toBe(false)
    const after = await settings()
    expect(after.effective.groups).toMatchObject({ roles: false, teams: false })
    expect(after.stored.groups).not.toHaveProperty('teams')
    expect(after.effective.oidcProvider).toMatchObject({ registration: { enabled: true } })
    expect(after.stored.oidcProvider).not.toHaveProperty('registration')
  })

  it('Overview: the enforcement grace period and the sign-up mode set at start-up; the roles save', { timeout: 90_000 }, async () => {
    await h.open('overview', 'Overview')
    const summary = page.getByTestId('second-factor-summary')
    await summary.getByTestId('startup-badge').waitFor()
    await expectStartupField('enforcement-grace', FILE_SOURCE())
    // signUp.mode from the config file: the one-click change gives way to the reason.
    const signUp = page.getByTestId('sign-up-startup')
    await signUp.waitFor()
    expect(await signUp.textContent()).toContain(`Set at start-up by ${FILE_SOURCE()}`)
    expect(await page.getByTestId('sign-up-invitation-only').count()).toBe(0)
    expect(await axe(page), 'Overview').toEqual([])

    const roles = page.getByTestId('enforcement-roles')
    await roles.fill('admin')
    await roles.press('Enter')
    await page.getByTestId('enforcement-save').click()
    await page.getByText('Enforcement updated').waitFor({ timeout: 15_000 })
    const after = await settings()
    expect(after.effective.twoFactor).toMatchObject({ enforcement: { roles: ['admin'], gracePeriod: 172_800 } })
    expect((after.stored.twoFactor as { enforcement: unknown }).enforcement).toEqual({ roles: ['admin'] })
  })

  it('Metrics: the listener of GATEHOUSE_METRICS_ADDRESS shown read-only with the badge naming the variable', {
    timeout: 60_000,
  }, async () => {
    await h.open('metrics', 'Metrics')
    const badges = page.getByTestId('metrics-form').getByTestId('startup-badge')
    await badges.first().waitFor()
    expect(await badges.count()).toBe(2)
    expect(await badges.first().getAttribute('data-source')).toBe('GATEHOUSE_METRICS_ADDRESS')
    await expectStartupField('metrics-address', 'GATEHOUSE_METRICS_ADDRESS')
    expect(await page.getByTestId('metrics-address').inputValue()).toBe(metricsAddress)
    expect(await axe(page), 'Metrics view').toEqual([])
  })
})
