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
  it('rotate publishes the new certificate beside the old one until --retire', async () => {
    const metadata = async () =>
      [...(await (await fetch(`${server.base}/saml/metadata`)).text()).matchAll(/<ds:X509Certificate>([^<]+)</g)].map((m) => m[1])
    const before = await metadata()
    expect(before).toHaveLength(1)
    const rotated = await cli('cert', 'rotate', '--json')
    expect(rotated.code).toBe(0)
    const certs = JSON.parse(rotated.stdout) as { id: string; signing: boolean }[]
    expect(certs.map((c) => c.signing)).toEqual([false, true])
    const both = await metadata()
    expect(both).toHaveLength(2)
    expect(both[0]).toBe(before[0])
    const retired = await cli('cert', 'rotate', '--retire', '--json')
    expect(retired.code).toBe(0)
    expect((JSON.parse(retired.stdout) as unknown[]).length).toBe(1)
    const after = await metadata()
    expect(after).toHaveLength(1)
    expect(after[0]).not.toBe(before[0])
    expect(after[0]).not.toBe(both[1])
    const last = await cli('cert', 'retire')
    expect(last.code).toBe(1)
  }, 120_000)
})
