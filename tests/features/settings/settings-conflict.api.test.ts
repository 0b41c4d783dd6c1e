import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PanelCaller } from '../../../server/core/panel-caller.js'
import type { PanelService } from '../../../server/panel/service.js'
import { adminCaller, panelServiceOf } from '../../helpers/panel-session.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 50 §1: a save changes only what the admin changed, and never over another admin's change.
 * `settings.update` with `base` (each changed field as the view read it) is refused with 409
 * CONFLICT naming who changed the field and when; a field the view did not change is not sent.
 */

let server: TestServer
let panel: PanelService
const admins = {} as Record<'ada' | 'bea', PanelCaller>

beforeAll(async () => {
  server = await startTestServer()
  panel = panelServiceOf(server)
  for (const name of ['ada', 'bea'] as const) admins[name] = await adminCaller(server, `${name}-${Date.now()}@example.com`)
})
afterAll(() => server?.close())

const ldap = () => server.gatehouse.config.get().ldap

describe('saves over another admin’s change', () => {
  it('a stale view saving one field leaves the other admin’s change; saving that very field is a conflict naming them', async () => {
    // Both views read the LDAP settings as they are.
    const read = await panel.dispatch('settings.get', {}, admins.ada)
    expect(read.ok).toBe(true)
    expect(ldap().allowMainPasswordWithSecondFactor).toBe(false)
    expect(ldap().idleTimeout).toBe(300)

    const bea = await panel.dispatch(
      'settings.update',
      { patch: { ldap: { allowMainPasswordWithSecondFactor: true } }, base: { 'ldap.allowMainPasswordWithSecondFactor': false } },
      admins.bea,
    )
    expect(bea.ok).toBe(true)

    // Ada's stale view changed only the idle timeout: saved, and Bea's switch stays on.
    const unrelated = await panel.dispatch(
      'settings.update',
      { patch: { ldap: { idleTimeout: 600 } }, base: { 'ldap.idleTimeout': 300 } },
      admins.ada,
    )
    expect(unrelated.ok).toBe(true)
    expect(ldap()).toMatchObject({ idleTimeout: 600, allowMainPasswordWithSecondFactor: true })

    // Ada now switches it off from the value she saw (off → she thinks it is off): refused, nothing saved.
    const stale = await panel.dispatch(
      'settings.update',
      {
        patch: { ldap: { allowMainPasswordWithSecondFactor: false, idleTimeout: 900 } },
        base: { 'ldap.allowMainPasswordWithSecondFactor': false, 'ldap.idleTimeout': 600 },
      },
      admins.ada,
    )
    expect(stale.ok).toBe(false)
    if (stale.ok) return
    const beaEmail = (admins.bea as { user: { email: string } }).user.email
    expect(stale.error).toMatchObject({ code: 'CONFLICT', status: 409 })
    expect(stale.error.message).toMatch(
      new RegExp(
        `^ldap\\.allowMainPasswordWithSecondFactor was changed by ${beaEmail.replace('.', '\\.')} at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z since you opened this view: nothing was saved`,
      ),
    )
    expect(stale.error.issues).toEqual([
      {
        path: 'ldap.allowMainPasswordWithSecondFactor',
        message: expect.stringMatching(new RegExp(`^changed by ${beaEmail.replace('.', '\\.')} at .+ to true since you opened this view$`)),
      },
    ])
    expect(ldap()).toMatchObject({ idleTimeout: 600, allowMainPasswordWithSecondFactor: true })

    // Read again, the same change goes through.
    const fresh = await panel.dispatch(
      'settings.update',
      { patch: { ldap: { allowMainPasswordWithSecondFactor: false } }, base: { 'ldap.allowMainPasswordWithSecondFactor': true } },
      admins.ada,
    )
    expect(fresh.ok).toBe(true)
    expect(ldap().allowMainPasswordWithSecondFactor).toBe(false)
  })

  it('a whole section replaced counts for its fields; absent and null read alike; no base: applied as before', async () => {
    const groups = await panel.dispatch('settings.update', { patch: { ldap: { searchRoles: ['admin', 'user'] } } }, admins.bea)
    expect(groups.ok).toBe(true)
    const stale = await panel.dispatch(
      'settings.update',
      { patch: { ldap: { searchRoles: ['user'] } }, base: { 'ldap.searchRoles': ['admin'] } },
      admins.ada,
    )
    expect(stale.ok ? null : stale.error.code).toBe('CONFLICT')
    // ldapsAddress is absent: a view that read it absent (null) may set it.
    const absent = await panel.dispatch(
      'settings.update',
      { patch: { ldap: { baseDN: 'dc=home,dc=arpa' } }, base: { 'ldap.ldapsAddress': null, 'ldap.baseDN': 'dc=gatehouse,dc=lan' } },
      admins.ada,
    )
    expect(absent.ok).toBe(true)
    expect(ldap().baseDN).toBe('dc=home,dc=arpa')
  })

  it('the other views’ saves (groups, token lifetimes, JWT) refuse a change over another admin’s the same way', async () => {
    const cases: Array<{ op: string; theirs: Record<string, unknown>; mine: Record<string, unknown>; path: string; read: unknown }> = [
      { op: 'groups.configure', theirs: { teams: false }, mine: { teams: true }, path: 'groups.teams', read: true },
      {
        op: 'oidc.configure',
        theirs: { ttl: { accessToken: 120 } },
        mine: { ttl: { accessToken: 7200 } },
        path: 'oidcProvider.ttl.accessToken',
        read: 3600,
      },
      { op: 'jwt.configure', theirs: { enabled: true }, mine: { enabled: false }, path: 'jwt.enabled', read: false },
    ]
    for (const c of cases) {
      expect((await panel.dispatch(c.op, { patch: c.theirs }, admins.bea)).ok, c.op).toBe(true)
      const stale = await panel.dispatch(c.op, { patch: c.mine, base: { [c.path]: c.read } }, admins.ada)
      expect(stale.ok, c.op).toBe(false)
      if (stale.ok) continue
      expect(stale.error.code, JSON.stringify(stale.error)).toBe('CONFLICT')
      expect(stale.error.issues?.[0]?.path).toBe(c.path)
      expect(stale.error.issues?.[0]?.message, c.op).toContain(`changed by ${(admins.bea as { user: { email: string } }).user.email} at `)
    }
    expect(server.gatehouse.config.get().groups.teams).toBe(false)
    expect(server.gatehouse.config.get().jwt.enabled).toBe(true)
  })
})
