import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PanelCaller } from '../../server/core/panel-caller.js'
import { findUserById } from '../../server/core/users.js'
import { createPanelService, type PanelService } from '../../server/panel/service.js'
import { signUp } from '../helpers/http.js'
import { silentLogger, startTestServer, type TestServer } from '../helpers/server.js'
import { type SmtpSink, startSmtpSink } from '../helpers/smtp.js'

/**
 * Issue 37 §7: an invitation sent from the control panel names the administrator who sent it.
 * Two administrators, Ada and Bob; Bob owns the organization. Before the fix the panel acted as a
 * nameless "system" and the mail named the organization's earliest owner (Bob) whoever sent it.
 * The mail's text is read from the real SMTP sink. Both engines.
 */

let server: TestServer
let panel: PanelService
let sink: SmtpSink
const meta = { ipAddress: '127.0.0.1', userAgent: 'gatehouse-panel' }

beforeAll(async () => {
  sink = await startSmtpSink()
  server = await startTestServer({ config: { mail: { smtp: { url: sink.url }, appName: 'Acme Login' } } })
  panel = createPanelService({
    gatehouse: server.gatehouse,
    apiURL: () => server.base,
    mode: 'browser',
    version: 'test',
    startedAt: Date.now(),
    logger: silentLogger,
  })
})
afterAll(async () => {
  await server?.close()
  await sink?.close()
})

async function ok<T = Record<string, unknown>>(op: string, input: unknown, caller?: PanelCaller): Promise<T> {
  const result = await panel.dispatch(op, input, caller)
  if (!result.ok) throw new Error(`${op}: ${result.error.code} ${result.error.message}`)
  return result.data as T
}

async function admin(name: string): Promise<{ caller: PanelCaller; email: string; id: string }> {
  const signed = await signUp(server.base, { name })
  await ok('users.setRole', { userId: signed.user.id, role: 'admin' })
  const row = await findUserById(server.gatehouse.ctx, signed.user.id)
  return { caller: { kind: 'admin', user: row!, access: 'full', meta }, email: signed.email, id: signed.user.id }
}

describe('an invitation sent from the panel', () => {
  it('names the administrator who sent it, member of the organization or not, never its owner', async () => {
    const ada = await admin('Ada Admin')
    const bob = await admin('Bob Owner')
    const tag = `inv${Date.now().toString(36)}`
    const { organization } = await ok<{ organization: { id: string } }>(
      'orgs.create',
      { name: `${tag} Org`, slug: tag, ownerUserId: bob.id },
      bob.caller,
    )

    // Ada is no member: the mail names her; the invitation's inviter of record is a member (Bob),
    // as accepting needs, so the recipient can accept it.
    const carol = `carol-${tag}@example.com`
    const first = await ok<{ invitation: { id: string; inviterId: string } }>(
      'orgs.invite',
      { organizationId: organization.id, email: carol, role: 'member' },
      ada.caller,
    )
    const mail = await sink.waitFor(carol)
    expect(mail.subject).toBe(`Ada Admin invited you to join ${tag} Org`)
    expect(mail.text).toContain(`Ada Admin (${ada.email}) invited you to join ${tag} Org as member.`)
    expect(mail.text).not.toContain('Bob Owner')
    expect(mail.text).not.toContain(bob.email)
    expect(mail.html).toContain(`<strong>Ada Admin</strong> (${ada.email}) invited you`)
    expect(first.invitation.inviterId).toBe(bob.id)
    const recipient = await signUp(server.base, { email: carol, name: 'Carol' })
    // The accept page's data names the same sender as the mail, not the inviter of record.
    const shown = await recipient.client.get<{ inviterEmail: string; inviterName: string; inviterId: string }>(
      `/organization/get-invitation?id=${first.invitation.id}`,
    )
    expect(shown.status).toBe(200)
    expect(shown.body).toMatchObject({ inviterEmail: ada.email, inviterName: 'Ada Admin', inviterId: bob.id })
    const accepted = await recipient.client.post('/organization/accept-invitation', { invitationId: first.invitation.id })
    expect(accepted.status).toBe(200)

    // Ada as a member: she is the inviter of record too.
    await ok('orgs.addMember', { organizationId: organization.id, userId: ada.id, role: 'admin' }, bob.caller)
    const dave = `dave-${tag}@example.com`
    const second = await ok<{ invitation: { id: string; inviterId: string } }>(
      'orgs.invite',
      { organizationId: organization.id, email: dave, role: 'member' },
      ada.caller,
    )
    expect(second.invitation.inviterId).toBe(ada.id)
    const daveUser = await signUp(server.base, { email: dave, name: 'Dave' })
    const secondShown = await daveUser.client.get<{ inviterEmail: string; inviterName: string }>(
      `/organization/get-invitation?id=${second.invitation.id}`,
    )
    expect(secondShown.body).toMatchObject({ inviterEmail: ada.email, inviterName: 'Ada Admin' })
    expect((await sink.waitFor(dave)).text).toContain(`Ada Admin (${ada.email}) invited you to join ${tag} Org as member.`)

    // Bob sending it names Bob.
    const erin = `erin-${tag}@example.com`
    await ok('orgs.invite', { organizationId: organization.id, email: erin, role: 'member' }, bob.caller)
    expect((await sink.waitFor(erin)).text).toContain(`Bob Owner (${bob.email}) invited you to join ${tag} Org as member.`)

    // The operator (the desktop's OS account, the recovery link) has no user row: the app's administrator, no one's name.
    const frank = `frank-${tag}@example.com`
    const operatorInvite = await ok<{ invitation: { id: string } }>(
      'orgs.invite',
      { organizationId: organization.id, email: frank, role: 'member' },
      { kind: 'os-account', account: 'alice', meta: { ipAddress: null, userAgent: 'gatehouse-desktop' } },
    )
    const operatorMail = await sink.waitFor(frank)
    const frankUser = await signUp(server.base, { email: frank, name: 'Frank' })
    const operatorShown = await frankUser.client.get<{ inviterEmail: string; inviterName: string }>(
      `/organization/get-invitation?id=${operatorInvite.invitation.id}`,
    )
    expect(operatorShown.body).toMatchObject({ inviterEmail: '', inviterName: 'The Acme Login administrator' })
    expect(operatorMail.text).toContain(`The Acme Login administrator invited you to join ${tag} Org as member.`)
    expect(operatorMail.text).not.toMatch(/Bob Owner|Ada Admin/)
  })

  it('a member inviting through the API is named as before', async () => {
    const owner = await signUp(server.base, { name: 'Olga Owner' })
    const tag = `api${Date.now().toString(36)}`
    const created = await owner.client.post<{ id: string }>('/organization/create', { name: `${tag} Org`, slug: tag })
    expect(created.status).toBe(200)
    const email = `gina-${tag}@example.com`
    const res = await owner.client.post<{ id: string }>('/organization/invite-member', {
      email,
      role: 'member',
      organizationId: created.body.id,
    })
    expect(res.status).toBe(200)
    expect((await sink.waitFor(email)).text).toContain(`Olga Owner (${owner.email}) invited you to join ${tag} Org as member.`)
    const gina = await signUp(server.base, { email, name: 'Gina' })
    const shown = await gina.client.get<{ inviterEmail: string; inviterName: string }>(`/organization/get-invitation?id=${res.body.id}`)
    expect(shown.body).toMatchObject({ inviterEmail: owner.email, inviterName: 'Olga Owner' })
  })
})
