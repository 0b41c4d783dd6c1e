import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { type PanelHarness, panelPageForFile, screenshot, viewOpener } from '../../panel/harness.js'
import { axe } from '../../helpers/axe.js'

/**
 * The Email view's template editor (issue 31 §3) in real Chromium: edit a message's subject and
 * body beside the preview (a draft previews before it is saved), a wrong placeholder is named
 * beside the field, save, reset to the built-in message; axe-core WCAG 2 A/AA on the editor.
 */

const session = panelPageForFile()
let h: PanelHarness
let page: Page
beforeAll(() => {
  ;({ h, page } = session)
})
const open = viewOpener(session)

describe('mail templates in the Email view', () => {
  it('edits the verification message beside its preview, names a wrong placeholder, saves and resets it', { timeout: 60_000 }, async () => {
    await open('email', 'Email')
    await page.getByRole('tab', { name: 'Templates' }).click()
    await page.getByTestId('template-kind').click()
    await page.getByRole('option', { name: 'verification', exact: true }).click()
    const subject = page.getByTestId('template-subject')
    const body = page.getByTestId('template-body')
    const preview = page.getByTestId('preview-subject')
    await preview.getByText('Verify your email address for Gatehouse').waitFor()
    expect(await subject.inputValue()).toBe('Verify your email address for {{appName}}')
    expect(await body.inputValue()).toBe('{{greeting}}\n\n{{message}}')
    expect(await page.getByTestId('template-state').textContent()).toBe('Built in')
    expect(await axe(page)).toEqual([])

    // A draft previews before it is saved.
    await subject.fill('Welcome to {{appName}}, {{email}}')
    await preview.getByText('Welcome to Gatehouse, ada@example.com').waitFor()

    // A misspelt placeholder is named beside the message field.
    await body.fill('Dear {{nmae}},\n\nConfirm here: {{url}}')
    await page.getByTestId('template-save').click()
    await page.getByText('Unknown placeholder {{nmae}}: use {{appName}}, {{email}}, {{greeting}}, {{message}}, {{url}}').first().waitFor()
    expect(await body.getAttribute('aria-invalid')).toBe('true')
    expect(h.server.gatehouse.config.get().mail.templates).toEqual({})
    expect(await axe(page)).toEqual([])

    await body.fill('{{greeting}}\n\nConfirm here: {{url}}')
    await page.getByTestId('template-save').click()
    await page.getByText('Template saved').waitFor()
    await page.getByTestId('template-state').getByText('Edited').waitFor()
    expect(h.server.gatehouse.config.get().mail.templates).toEqual({
      verification: { subject: 'Welcome to {{appName}}, {{email}}', body: '{{greeting}}\n\nConfirm here: {{url}}' },
    })
    const frame = page.frameLocator('iframe[title="Email preview"]')
    await frame.getByText('Confirm here: http', { exact: false }).waitFor()
    await screenshot(page, 'email-template-edited')

    await page.getByTestId('template-reset').click()
    await page.getByTestId('template-state').getByText('Built in').waitFor()
    await preview.getByText('Verify your email address for Gatehouse').waitFor()
    expect(await subject.inputValue()).toBe('Verify your email address for {{appName}}')
    expect(h.server.gatehouse.config.get().mail.templates).toEqual({})
  })
})
