import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { ldapListening } from '../../../server/features/ldap/index.js'
import { createPanelService } from '../../../server/panel/service.js'
import { axe } from '../../helpers/axe.js'
import { freePort, warnSkipped } from '../../helpers/engines.js'
import { verifiedSignUp } from '../../helpers/members.js'
import { silentLogger } from '../../helpers/server.js'
import { type PanelHarness, panelPageForFile, viewOpener } from '../../panel/harness.js'
import { BASE, ldapsearch, ldapUtilsMissing, PASSWORD, parseLdif } from './helpers.js'

/**
 * The LDAP view's "test a bind and a filter" box in real Chromium: what it shows for a bind and a
 * search is what OpenLDAP's `ldapsearch` gets from the listener for the same ones (the bind
 * result, every entry with its attributes, the size limit), a filter that is not one is named
 * beside the Filter field, and axe finds nothing on the box.
 */

let h: PanelHarness
let page: Page
const session = panelPageForFile()
const open = viewOpener(session)
let url = ''
const alice = { dn: `uid=alice,ou=people,${BASE}` }

beforeAll(async () => {
  ;({ h, page } = session)
  const service = createPanelService({
    gatehouse: h.server.gatehouse,
    apiURL: () => h.server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
  const dispatch = async (op: string, input: unknown) => {
    const result = await service.dispatch(op, input)
    if (!result.ok) throw new Error(`${op}: ${result.error.code} ${result.error.message}`)
    return result.data
  }
  const made = await verifiedSignUp(h.server, { username: 'alice', name: 'Alice Liddell', email: 'alice@example.com' })
  await dispatch('users.setRole', { userId: made.user.id, role: 'admin' })
  await verifiedSignUp(h.server, { username: 'bob', name: 'Bob Builder', email: 'bob@example.com' })
  await dispatch('settings.update', { patch: { ldap: { enabled: true, address: `127.0.0.1:${await freePort()}` } } })
  // The switch applies live (onConfigChange): wait, bounded, for the listener it opens.
  let bound: Awaited<ReturnType<typeof ldapListening>>
  for (let i = 0; i < 150 && !bound; i++) {
    bound = await ldapListening(h.server.gatehouse.ctx)
    if (!bound) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  if (!bound) throw new Error('the LDAP listener did not open')
  url = `ldap://127.0.0.1:${bound.address.port}`
}, 60_000)

/** The box's entries as shown: each card's DN and its attribute table. */
function shownEntries() {
  return page.$$eval('[data-testid="ldap-test-entry"]', (cards) =>
    cards.map((card) => ({
      dn: card.querySelector('[data-testid="ldap-test-dn"]')?.textContent ?? '',
      attributes: [...card.querySelectorAll('tr')].map((row) => ({
        name: row.querySelector('th')?.textContent ?? '',
        values: [...row.querySelectorAll('td > div')].map((v) => v.textContent ?? ''),
      })),
    })),
  )
}

async function fillBox(search: { password: string; base?: string; filter: string; attributes?: string[]; sizeLimit?: number }) {
  await page.getByLabel('Password', { exact: true }).fill(search.password)
  if (search.base) await page.getByLabel('Search base').fill(search.base)
  await page.getByLabel('Filter', { exact: true }).fill(search.filter)
  for (const attribute of search.attributes ?? []) {
    await page.getByRole('combobox', { name: 'Attributes' }).fill(attribute)
    await page.getByRole('combobox', { name: 'Attributes' }).press('Enter')
  }
  if (search.sizeLimit) await page.getByLabel('Size limit').fill(String(search.sizeLimit))
  await page.getByTestId('ldap-test-run').click()
}

describe('LDAP view: test a bind and a filter', () => {
  warnSkipped('LDAP: the panel test box against ldapsearch (ldap-utils)', ldapUtilsMissing)

  it.skipIf(!!ldapUtilsMissing)(
    'shows what ldapsearch gets for the same bind and search; axe finds nothing',
    { timeout: 120_000 },
    async () => {
      await open('ldap', 'LDAP')
      // The service user (alice, an admin: admin is in ldap.searchRoles) fills in the bind DN.
      await page.getByRole('combobox', { name: 'Bind as a service user' }).click()
      await page.getByRole('option', { name: 'alice', exact: true }).click()
      await expect.poll(() => page.getByLabel('Bind DN').inputValue()).toBe(alice.dn)
      const search = {
        bindDN: alice.dn,
        password: PASSWORD,
        base: BASE,
        scope: 'sub',
        filter: '(|(objectClass=person)(cn=admin))',
        attributes: ['uid', 'mail', 'member', 'memberOf'],
      }
      await fillBox(search)
      await page.getByTestId('ldap-test-answer').waitFor({ timeout: 20_000 })
      expect(await page.getByTestId('ldap-test-bind').textContent()).toBe('success (0)')
      expect(await page.getByTestId('ldap-test-search').textContent()).toBe('success (0)')
      const cli = await ldapsearch({ url }, search)
      expect(cli.code, cli.stderr).toBe(0)
      const expected = parseLdif(cli.stdout)
      expect(expected.map((e) => e.dn).sort()).toEqual([`cn=admin,ou=groups,${BASE}`, alice.dn, `uid=bob,ou=people,${BASE}`])
      expect(await shownEntries()).toEqual(expected)
      expect(await page.getByTestId('ldap-test-count').textContent()).toBe('3 entries')
      expect(await axe(page)).toEqual([])

      // A size limit: the entries up to it and sizeLimitExceeded (4), as ldapsearch -z exits.
      await page.getByLabel('Size limit').fill('1')
      await page.getByTestId('ldap-test-run').click()
      await expect.poll(() => page.getByTestId('ldap-test-search').textContent(), { timeout: 20_000 }).toBe('sizeLimitExceeded (4)')
      const limited = await ldapsearch({ url }, { ...search, sizeLimit: 1 })
      expect(limited.code).toBe(4)
      expect(await shownEntries()).toEqual(parseLdif(limited.stdout))
      expect(await shownEntries()).toHaveLength(1)
    },
  )

  it.skipIf(!!ldapUtilsMissing)(
    'a wrong password is invalidCredentials (49) with no search; a bad filter is named beside the field',
    { timeout: 120_000 },
    async () => {
      await open('ldap', 'LDAP')
      await page.getByLabel('Bind DN').fill(`uid=bob,ou=people,${BASE}`)
      await fillBox({ password: 'not the password', filter: '(uid=*)' })
      await expect.poll(() => page.getByTestId('ldap-test-bind').textContent(), { timeout: 20_000 }).toBe('invalidCredentials (49)')
      expect(await page.getByTestId('ldap-test-search').count()).toBe(0)
      expect(await page.getByTestId('ldap-test-answer').textContent()).toContain('no search is made')
      const cli = await ldapsearch(
        { url },
        { bindDN: `uid=bob,ou=people,${BASE}`, password: 'not the password', base: BASE, scope: 'sub', filter: '(uid=*)' },
      )
      expect(cli.code).toBe(49)

      await page.getByLabel('Password', { exact: true }).fill(PASSWORD)
      await page.getByLabel('Filter', { exact: true }).fill('(&(uid=bob)')
      await page.getByTestId('ldap-test-run').click()
      const form = page.getByTestId('ldap-test-form')
      await expect.poll(() => form.textContent(), { timeout: 20_000 }).toContain('This is not an LDAP search filter')
      expect(await page.getByLabel('Filter', { exact: true }).getAttribute('aria-invalid')).toBe('true')
      expect(await page.getByTestId('ldap-test-answer').count()).toBe(0)
      expect(await axe(page)).toEqual([])
    },
  )
})
