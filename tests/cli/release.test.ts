import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from '../helpers/process.js'

const root = join(import.meta.dirname, '..', '..')
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version

describe('release version', () => {
  it('package.json names a release other than the 0.1.0 every build used to call itself', () => {
    expect(version).toMatch(/^0\.\d+\.\d+$/)
    expect(version).not.toBe('0.1.0')
  })

  it('gatehouse --version (and -V, version) prints it, exit 0', async () => {
    for (const arg of ['--version', '-V', 'version']) {
      const run = await runCli([arg])
      expect(run).toEqual({ code: 0, stdout: `gatehouse ${version}\n`, stderr: '' })
    }
  }, 90_000)

  it('CHANGELOG.md has an Upgrading section for this version, and docs/UPGRADING.md links it', () => {
    const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8')
    const section = changelog.split(/^## /m).find((s) => s.startsWith(`${version}\n`))
    expect(section).toBeDefined()
    expect(section).toMatch(/^### Upgrading$/m)
    // Last round's deliberate changes, noted nowhere before (issue 50 §6).
    for (const change of ['`//admin`', '`subject.teams`', '`client_credentials`']) expect(changelog).toContain(change)
    const upgrading = readFileSync(join(root, 'docs', 'UPGRADING.md'), 'utf8')
    expect(upgrading).toContain(`[CHANGELOG ${version}](../CHANGELOG.md#${version.replaceAll('.', '')})`)
  })
})
