import { createAuthClient } from 'better-auth/client'
import { organizationClient } from 'better-auth/client/plugins'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inviteMember, resendInvitation } from '../../../server/features/organization/invitations.js'
import { systemActor } from '../../../server/features/organization/shared.js'
import { auditEvent } from '../../../server/db/schema.js'
import { type CookieJar, jarFetch, signUp, uniqueEmail } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { type SmtpSink, startSmtpSink } from '../../helpers/smtp.js'
import { linkIn } from '../../helpers/mail-flow.js'

let sink: SmtpSink
let server: TestServer
beforeAll(async () => {
  sink = await startSmtpSink()
  server = await startTestServer({ config: { mail: { smtp: { url: sink.url } } } })
})
afterAll(async () => {
  await server.close()
  await sink.close()
})

function client(jar: CookieJar) {
  return createAuthClient({
    baseURL: server.origin,
    plugins: [organizationClient({ teams: { enabled: true } })],
    fetchOptions: {
      customFetchImpl: jarFetch(server.origin, jar),
    },
  })
}

async function person(email = uniqueEmail('mail'), name = 'Test User') {
  const signed = await signUp(server.base, { email, name })
  return { id: signed.user.id, email, client: client(signed.client.jar) }
}

describe('invitation mail through SMTP', () => {
  it('invite → mail with the accept link → recipient signs up, reads and accepts it', async () => {
    const alice = await person(uniqueEmail('inviter'), 'Alice <Admin>')
    const created = await alice.client.organization.create({ name: 'Rock & Roll <Ltd>', slug: `rock-${Date.now().toString(36)}` })
    const orgId = created.data?.id as string
    const bobEmail = uniqueEmail('invitee')
    const inv = await alice.client.organization.inviteMember({ email: bobEmail, role: 'admin' })
    expect(inv.error).toBeNull()
    const invitationId = inv.data?.id as string

    const mail = await sink.waitFor(bobEmail)
    expect(mail.subject).toBe('Alice <Admin> invited you to join Rock & Roll <Ltd>')
    // The hosted accept-invitation page by default (issue 31 §3; tests/hosted covers the page).
    const link = linkIn(mail, `${server.base}/ui/accept-invitation`)
    expect(link).toBe(`${server.base}/ui/accept-invitation?id=${invitationId}`)
    expect(mail.text).toContain(`Alice <Admin> (${alice.email}) invited you to join Rock & Roll <Ltd> as admin.`)
    expect(mail.text).toContain('2026-01-03 12:00:00 UTC')
    expect(mail.html).toContain(`href="${link}"`)
    expect(mail.html).toContain('Rock &amp; Roll &lt;Ltd&gt;')
    expect(mail.html).not.toContain('<Ltd>')

    // The recipient has no account yet: signs up with the invited address, then follows the link.
    const bob = await person(bobEmail)
    const id = new URL(link).searchParams.get('id') as string
    const seen = await bob.client.organization.getInvitation({ query: { id } })
    expect(seen.data).toMatchObject({ organizationName: 'Rock & Roll <Ltd>', inviterEmail: alice.email, role: 'admin' })
    const accepted = await bob.client.organization.acceptInvitation({ invitationId: id })
    expect(accepted.data?.member).toMatchObject({ userId: bob.id, organizationId: orgId, role: 'admin' })
    const session = await bob.client.getSession()
    expect((session.data?.session as { activeOrganizationId?: string } | undefined)?.activeOrganizationId).toBe(orgId)
  })

  it('resend mails again with a renewed expiry; the configured invitation URL is used live', async () => {
    const alice = await person()
    await alice.client.organization.create({ name: 'Resend Co', slug: `resend-${Date.now().toString(36)}` })
    const email = uniqueEmail('again')
    const first = await alice.client.organization.inviteMember({ email, role: 'member' })
    await sink.waitFor(email)
    server.gatehouse.config.update({ organization: { invitationURL: 'https://app.example/join?invite={id}' } })
    try {
      server.clock.advanceSeconds(600)
      const again = await alice.client.organization.inviteMember({ email, role: 'member', resend: true })
      expect(again.data?.id).toBe(first.data?.id)
      const second = await sink.waitFor(email, (m) => m.text.includes('https://app.example/join'))
      expect(linkIn(second, 'https://app.example/join')).toBe(`https://app.example/join?invite=${first.data?.id}`)
      expect(sink.inbox.filter((m) => m.to.includes(email))).toHaveLength(2)
    } finally {
      server.gatehouse.config.update({ organization: { invitationURL: null } })
    }
  })

  it('the panel invites and resends through the same domain functions, mail included', async () => {
    const alice = await person()
    const created = await alice.client.organization.create({ name: 'Panel Org', slug: `panel-${Date.now().toString(36)}` })
    const orgId = created.data?.id as string
    const ctx = server.gatehouse.ctx
    const email = uniqueEmail('panel')
    const row = await inviteMember(ctx, systemActor(), { organizationId: orgId, email, role: 'member' })
    expect(row.inviterId).toBe(alice.id)
    await sink.waitFor(email)
    await resendInvitation(ctx, systemActor(), row.id)
    await sink.waitFor(email, (m) => sink.inbox.filter((x) => x.to.includes(email)).indexOf(m) === 1)
    const events = await ctx.db.select().from(auditEvent).where(eq(auditEvent.target, orgId))
    const created_ = events.find((e) => e.type === 'invitation.created')
    expect(created_?.detail).toMatchObject({ email, via: 'system' })
    expect(events.some((e) => e.type === 'invitation.resent')).toBe(true)
  })
})
