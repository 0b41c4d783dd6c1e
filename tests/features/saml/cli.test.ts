import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpClient } from '../../helpers/http.js'
import { runCli } from '../../helpers/process.js'
import { serverLog, startTestServer, type TestServer } from '../../helpers/server.js'
import { authnRequest, makeSp, redirectQuery, useClock } from './sp.js'

/**
 * `gatehouse saml sp …` and `gatehouse saml cert …` on the data directory of a running server (the
 * real CLI process): each change counts at the server's next request; each is audited.
 */

let server: TestServer
let dir: string

beforeAll(async () => {
  server = await startTestServer({ config: { saml: { enabled: true } } })
  useClock(() => server.clock.now())
  dir = mkdtempSync(join(tmpdir(), 'saml-cli-'))
})
afterAll(async () => {
  await server?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function auditTypes(): Promise<string[]> {
  const { auditEvent } = await import('../../../server/db/schema.js')
  return (await server.gatehouse.ctx.db.select({ type: auditEvent.type }).from(auditEvent)).map((r) => r.type)
}

const cli = (...args: string[]) => runCli(['saml', ...args, '--data-dir', server.dataDir])
const idp = () => ({ sso: `${server.base}/saml/sso`, slo: `${server.base}/saml/slo` })

describe('gatehouse saml sp', () => {
  it('create --json prints the SP; the running server takes requests from it at once; update, list, delete', async () => {
    const sp = makeSp('cli-sp')
    const file = join(dir, 'sp.xml')
    writeFileSync(file, sp.metadata())
    const created = await cli(
      'sp',
      'create',
      '--metadata-file',
      file,
      '--name',
      'Wiki',
      '--name-id-format',
      'persistent',
      '--allowed-groups',
      'staff, admins',
      '--json',
    )
    expect(created.stderr).toBe('')
    expect(created.code).toBe(0)
    const view = JSON.parse(created.stdout) as Record<string, unknown>
    expect(view).toMatchObject({
      name: 'Wiki',
      entityId: sp.entityId,
      nameIdFormat: 'persistent',
      allowedGroups: ['staff', 'admins'],
      acsUrls: [sp.acs],
      sloUrls: [sp.slo],
      authnRequestsSigned: true,
      source: 'database',
    })

    // The running server knows it now: a signed request goes on to the sign-in step.
    const res = await new HttpClient(server.base).get(`/saml/sso?${redirectQuery(authnRequest(sp, idp()).xml, sp.privateKeyPem)}`)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toContain('/saml/continue/')

    const updated = await cli(
      'sp',
      'update',
      '--sp',
      sp.entityId,
      '--name-id-format',
      'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      '--allowed-groups',
      '',
      '--json',
    )
    expect(updated.code).toBe(0)
    expect(JSON.parse(updated.stdout)).toMatchObject({ nameIdFormat: 'email', allowedGroups: [] })
    const shared = await cli('sp', 'update', '--sp', sp.entityId, '--name-id-format', 'persistent-shared', '--json')
    expect(shared.code).toBe(0)
    expect(JSON.parse(shared.stdout)).toMatchObject({ nameIdFormat: 'persistent-shared' })
    const back = await cli('sp', 'update', '--sp', sp.entityId, '--name-id-format', 'email', '--json')
    expect(JSON.parse(back.stdout)).toMatchObject({ nameIdFormat: 'email' })

    const listed = await cli('sp', 'list', '--json')
    expect((JSON.parse(listed.stdout) as { entityId: string }[]).map((s) => s.entityId)).toEqual([sp.entityId])

    const again = await cli('sp', 'create', '--metadata-file', file)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('already registered')

    const deleted = await cli('sp', 'delete', '--sp', view.id as string)
    expect(deleted.code).toBe(0)
    serverLog.allowWarning(/SAML request refused: UNKNOWN_SP/)
    const gone = await new HttpClient(server.base).get(`/saml/sso?${redirectQuery(authnRequest(sp, idp()).xml, sp.privateKeyPem)}`)
    expect(new URL(gone.headers.get('location') as string).searchParams.get('error')).toBe('saml_unknown_sp')

    const types = await auditTypes()
    expect(types).toEqual(expect.arrayContaining(['saml.sp-created', 'saml.sp-updated', 'saml.sp-deleted']))
  }, 120_000)

  it('refuses metadata it cannot use, and an unknown format', async () => {
    const file = join(dir, 'bad.xml')
    writeFileSync(file, '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>')
    const bad = await cli('sp', 'create', '--metadata-file', file)
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('metadata could not be read')
    const sp = makeSp('cli-sp2')
    writeFileSync(file, sp.metadata())
    const format = await cli('sp', 'create', '--metadata-file', file, '--name-id-format', 'transient')
    expect(format.code).toBe(1)
    expect(format.stderr).toContain('NameID format')
    const usage = await cli('sp', 'create')
    expect(usage.code).toBe(2)
  }, 120_000)
})

describe('gatehouse saml cert', () => {
  it('rotate publishes the next certificate beside the signing one; it signs only at --activate; retire removes the old one', async () => {
    const metadata = async () =>
      [...(await (await fetch(`${server.base}/saml/metadata`)).text()).matchAll(/<ds:X509Certificate>([^<]+)</g)].map((m) => m[1])
    type Cert = { id: string; signing: boolean; next: boolean; activatesAt: number }
    const before = await metadata()
    expect(before).toHaveLength(1)
    const rotatedAt = Date.now()
    const rotated = await cli('cert', 'rotate', '--json')
    expect(rotated.code).toBe(0)
    const certs = JSON.parse(rotated.stdout) as Cert[]
    // The old one still signs; the new one is published, signing 7 days later (saml.keyRolloverDays).
    expect(certs.map((c) => [c.signing, c.next])).toEqual([
      [true, false],
      [false, true],
    ])
    expect(certs[1]?.activatesAt).toBeGreaterThanOrEqual(rotatedAt + 7 * 86_400_000)
    const both = await metadata()
    expect(both).toHaveLength(2)
    expect(both[0]).toBe(before[0])
    const text = await cli('cert', 'list')
    expect(text.stdout).toContain('next (signs from ')
    // A second rotate while one is pending: refused, with what to do.
    const again = await cli('cert', 'rotate')
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('gatehouse saml cert rotate --activate')
    expect(await metadata()).toEqual(both)
    // --activate: the published one signs now (no new key).
    const activated = JSON.parse((await cli('cert', 'rotate', '--activate', '--json')).stdout) as Cert[]
    expect(activated.map((c) => [c.id, c.signing, c.next])).toEqual([
      [certs[0]?.id, false, false],
      [certs[1]?.id, true, false],
    ])
    expect(await metadata()).toEqual(both)
    const retiredOld = JSON.parse((await cli('cert', 'retire', '--json')).stdout) as Cert[]
    expect(retiredOld.map((c) => c.id)).toEqual([certs[1]?.id])
    expect(await metadata()).toEqual([both[1]])
    const last = await cli('cert', 'retire')
    expect(last.code).toBe(1)
    // --retire: a new key signs at once and every other leaves the metadata (a key that must go now).
    const replaced = JSON.parse((await cli('cert', 'rotate', '--retire', '--json')).stdout) as Cert[]
    expect(replaced).toHaveLength(1)
    expect(replaced[0]?.signing).toBe(true)
    const after = await metadata()
    expect(after).toHaveLength(1)
    expect(after[0]).not.toBe(both[1])
  }, 180_000)

  it('--help gives the safe order of a rollover', async () => {
    const help = await cli('help')
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('1. gatehouse saml cert rotate ')
    expect(help.stdout).toContain('3. gatehouse saml cert rotate --activate')
    expect(help.stdout.indexOf('2. every service provider re-reads the metadata')).toBeGreaterThan(help.stdout.indexOf('1. gatehouse'))
  })
})
