import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { queryAuditEvents } from '../../server/core/audit.js'
import type { PanelCaller } from '../../server/core/panel-caller.js'
import type { PanelService } from '../../server/panel/service.js'
import { adminCaller, panelServiceOf } from '../helpers/panel-session.js'
import { startTestServer, type TestServer } from '../helpers/server.js'

/**
 * Issue 50 §1 for managed objects, on both engines: a save sends the fields the admin changed and,
 * in `base`, each as the view read it. A stale view saving another field leaves the other admin's
 * change; saving a field they changed is refused (409 CONFLICT) naming them, when, and their value,
 * and nothing is saved; the audit event of each change carries the old and new value of every
 * field it changed, never a secret.
 */

let server: TestServer
let panel: PanelService
const admins = {} as Record<'ada' | 'bea', PanelCaller & { kind: 'admin' }>

beforeAll(async () => {
  server = await startTestServer({ config: { saml: { enabled: true }, oidcProvider: { enabled: true } } })
  panel = panelServiceOf(server)
  for (const name of ['ada', 'bea'] as const) admins[name] = await adminCaller(server, `${name}-${Date.now()}@example.com`)
})
afterAll(() => server?.close())

type Result = Awaited<ReturnType<PanelService['dispatch']>>

async function as(who: 'ada' | 'bea' | null, op: string, input: unknown): Promise<Result> {
  server.clock.advance(1_000)
  return panel.dispatch(op, input, who ? admins[who] : undefined)
}

async function ok<T>(who: 'ada' | 'bea' | null, op: string, input: unknown): Promise<T> {
  const result = await as(who, op, input)
  if (!result.ok) throw new Error(`${op}: ${JSON.stringify(result.error)}`)
  return result.data as T
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The refusal of a stale save: 409 CONFLICT, one issue per stale field naming who, when and their value. */
function expectConflict(result: Result, path: string, who: 'ada' | 'bea', theirs: unknown): void {
  expect(result.ok).toBe(false)
  if (result.ok) return
  const email = escapeRe(admins[who].user.email)
  expect(result.error).toMatchObject({ code: 'CONFLICT', status: 409 })
  expect(result.error.message).toMatch(
    new RegExp(
      `^${escapeRe(path)} was changed by ${email} at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z since you opened this view: nothing was saved`,
    ),
  )
  expect(result.error.issues).toEqual([
    {
      path,
      message: expect.stringMatching(
        new RegExp(`^changed by ${email} at .+ to ${escapeRe(JSON.stringify(theirs))} since you opened this view$`),
      ),
    },
  ])
}

async function changesOf(type: string, target: string): Promise<unknown[]> {
  const { events } = await queryAuditEvents(server.gatehouse.ctx, { type }, {})
  return events
    .filter((e) => e.target === target)
    .reverse()
    .map((e) => (typeof e.detail === 'string' ? JSON.parse(e.detail) : e.detail).changes)
}

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
const spMetadata = (origin: string, acs = `${origin}/mellon/postResponse`) => `<?xml version="1.0"?>
<EntityDescriptor xmlns="${MD}" entityID="${origin}/mellon/metadata">
  <SPSSODescriptor AuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${acs}" index="0" isDefault="true"/>
  </SPSSODescriptor>
</EntityDescriptor>`

describe('SAML service providers', () => {
  it('a stale save of one field keeps the other admin’s change; saving the field they changed is a conflict naming them', async () => {
    const sp = await ok<{ id: string }>(null, 'saml.createServiceProvider', {
      metadataXml: spMetadata('https://photos.home.arpa'),
      name: 'Photos',
    })
    // Both views read it: name Photos, everyone allowed. Bea restricts it to a group.
    await ok('bea', 'saml.updateServiceProvider', { id: sp.id, allowedGroups: ['family'], base: { allowedGroups: [] } })
    // Ada's view, still showing no groups, renames it: saved, and Bea's groups stay.
    const renamed = await ok<{ name: string; allowedGroups: string[] }>('ada', 'saml.updateServiceProvider', {
      id: sp.id,
      name: 'Photo library',
      base: { name: 'Photos' },
    })
    expect(renamed).toMatchObject({ name: 'Photo library', allowedGroups: ['family'] })
    // Ada now sets the groups from the empty list she read: refused, nothing saved.
    const stale = await as('ada', 'saml.updateServiceProvider', {
      id: sp.id,
      allowedGroups: ['admins'],
      nameIdFormat: 'persistent',
      base: { allowedGroups: [], nameIdFormat: 'email' },
    })
    expectConflict(stale, 'allowedGroups', 'bea', ['family'])
    const [now] = (await ok<{ serviceProviders: Array<Record<string, unknown>> }>(null, 'saml.serviceProviders', {})).serviceProviders
    expect(now).toMatchObject({ name: 'Photo library', allowedGroups: ['family'], nameIdFormat: 'email' })
    // Without a base (scripts, the CLI): applied as before.
    await ok(null, 'saml.updateServiceProvider', { id: sp.id, allowedGroups: ['admins'] })

    // The audit: each change with the old and new value of every field it changed.
    expect(await changesOf('saml.sp-updated', sp.id)).toEqual([
      [{ key: 'allowedGroups', from: [], to: ['family'] }],
      [{ key: 'name', from: 'Photos', to: 'Photo library' }],
      [{ key: 'allowedGroups', from: ['family'], to: ['admins'] }],
    ])
  })

  it('new metadata records the entityID and ACS it brings, the XML cut', async () => {
    const sp = await ok<{ id: string }>(null, 'saml.createServiceProvider', { metadataXml: spMetadata('https://wiki.home.arpa') })
    const next = spMetadata('https://wiki.home.arpa', 'https://wiki.home.arpa/saml/acs')
    await ok('ada', 'saml.updateServiceProvider', {
      id: sp.id,
      metadataXml: next,
      base: { metadataXml: spMetadata('https://wiki.home.arpa') },
    })
    const [changes] = (await changesOf('saml.sp-updated', sp.id)) as Array<Array<{ key: string; from: unknown; to: unknown }>>
    expect(changes?.map((c) => c.key)).toEqual(['acsUrls', 'metadataXml'])
    expect(changes?.[0]).toEqual({
      key: 'acsUrls',
      from: ['https://wiki.home.arpa/mellon/postResponse'],
      to: ['https://wiki.home.arpa/saml/acs'],
    })
  })
})

describe('OIDC clients', () => {
  it('a stale save of one field keeps the other admin’s change; saving the field they changed is a conflict naming them; no secret audited', async () => {
    const { client, clientSecret } = await ok<{ client: { clientId: string }; clientSecret: string }>(null, 'oidc.createClient', {
      name: 'Wiki',
      redirectUris: ['https://wiki.example.com/cb'],
    })
    const id = client.clientId
    await ok('bea', 'oidc.updateClient', { clientId: id, skipConsent: true, base: { skipConsent: false } })
    const renamed = await ok<Record<string, unknown>>('ada', 'oidc.updateClient', {
      clientId: id,
      name: 'Team wiki',
      redirectUris: ['https://wiki.example.com/oidc/cb'],
      base: { name: 'Wiki', redirectUris: ['https://wiki.example.com/cb'] },
    })
    expect(renamed).toMatchObject({ name: 'Team wiki', redirectUris: ['https://wiki.example.com/oidc/cb'], skipConsent: true })
    // Ada, from what she read (consent asked), now switches PKCE off and consent... asked: refused.
    const stale = await as('ada', 'oidc.updateClient', {
      clientId: id,
      skipConsent: false,
      pkceRequired: false,
      base: { skipConsent: false, pkceRequired: true },
    })
    expectConflict(stale, 'skipConsent', 'bea', true)
    const listed = (await ok<{ clients: Array<Record<string, unknown>> }>(null, 'oidc.clients', {})).clients.find((c) => c.clientId === id)
    expect(listed).toMatchObject({ name: 'Team wiki', skipConsent: true, pkceRequired: true })
    // A field a secret rotation did not touch still names who changed it.
    const rotated = await ok<{ clientSecret: string }>('bea', 'oidc.rotateSecret', { clientId: id })
    expectConflict(
      await as('ada', 'oidc.updateClient', { clientId: id, name: 'Wiki 2', base: { name: 'Wiki' } }),
      'name',
      'ada',
      'Team wiki',
    )

    expect(await changesOf('oidc.client-updated', id)).toEqual([
      [{ key: 'skipConsent', from: false, to: true }],
      [
        { key: 'name', from: 'Wiki', to: 'Team wiki' },
        { key: 'redirectUris', from: ['https://wiki.example.com/cb'], to: ['https://wiki.example.com/oidc/cb'] },
      ],
    ])
    // Neither secret nor its hash anywhere in the log.
    const { events } = await queryAuditEvents(server.gatehouse.ctx, {}, {})
    const log = JSON.stringify(events)
    for (const secret of [clientSecret, rotated.clientSecret]) {
      expect(log).not.toContain(secret)
      expect(log).not.toContain(createHash('sha256').update(secret).digest('base64url'))
      expect(log).not.toContain(createHash('sha256').update(secret).digest('hex'))
    }
  })
})

/** The config.changed events' changes of a config path's keys, oldest first. */
async function configChanges(prefix: string): Promise<unknown[]> {
  const { events } = await queryAuditEvents(server.gatehouse.ctx, { type: 'config.changed' }, {})
  return events
    .reverse()
    .map((e) => ((typeof e.detail === 'string' ? JSON.parse(e.detail) : e.detail) as { changes: Array<{ key: string }> }).changes)
    .map((changes) => changes.filter((c) => c.key.startsWith(prefix)))
    .filter((changes) => changes.length > 0)
}

describe('forward-auth settings', () => {
  it('a stale save of one field keeps the other admin’s change; saving the field they changed is a conflict naming them', async () => {
    const rule = { domain: 'app.example.lan', policy: 'signed-in' }
    await ok('bea', 'forwardAuth.save', { defaultPolicy: 'signed-in', base: { 'forwardAuth.defaultPolicy': 'deny' } })
    await ok('ada', 'forwardAuth.save', { enabled: true, rules: [rule], base: { 'forwardAuth.enabled': false, 'forwardAuth.rules': [] } })
    expect(server.gatehouse.config.get().forwardAuth).toMatchObject({ enabled: true, defaultPolicy: 'signed-in', rules: [rule] })
    const stale = await as('ada', 'forwardAuth.save', { defaultPolicy: 'bypass', base: { 'forwardAuth.defaultPolicy': 'deny' } })
    expectConflict(stale, 'forwardAuth.defaultPolicy', 'bea', 'signed-in')
    // A rule list another admin changed is one field: their rules are never replaced by a stale list.
    await ok('bea', 'forwardAuth.save', { rules: [{ ...rule, policy: 'two-factor' }], base: { 'forwardAuth.rules': [rule] } })
    expectConflict(
      await as('ada', 'forwardAuth.save', {
        rules: [rule, { domain: 'b.example.lan', policy: 'bypass' }],
        base: { 'forwardAuth.rules': [rule] },
      }),
      'forwardAuth.rules',
      'bea',
      [{ ...rule, policy: 'two-factor' }],
    )
    expect(server.gatehouse.config.get().forwardAuth).toMatchObject({
      defaultPolicy: 'signed-in',
      rules: [{ ...rule, policy: 'two-factor' }],
    })
    expect(await configChanges('forwardAuth.')).toEqual([
      [{ key: 'forwardAuth.defaultPolicy', from: 'deny', to: 'signed-in' }],
      [
        { key: 'forwardAuth.enabled', from: false, to: true },
        { key: 'forwardAuth.rules', from: [], to: [rule] },
      ],
      [{ key: 'forwardAuth.rules', from: [rule], to: [{ ...rule, policy: 'two-factor' }] }],
    ])
  })
})

describe('mail templates', () => {
  it('subject and body saved apart are both kept; a stale save or reset of a field another admin changed is a conflict naming them', async () => {
    type Shown = { kind: string; subject: string; body: string; custom: boolean }
    const shown = async () => (await ok<Shown[]>(null, 'email.templates', {})).find((t) => t.kind === 'verification') as Shown
    const read = await shown()
    expect(read.custom).toBe(false)
    // From the built-in message, Bea edits the body and Ada (a stale editor) the subject: both kept.
    await ok('bea', 'email.saveTemplate', { kind: 'verification', body: 'Hello {{greeting}}\n\n{{message}}', base: { body: read.body } })
    await ok('ada', 'email.saveTemplate', { kind: 'verification', subject: 'Confirm for {{appName}}', base: { subject: read.subject } })
    expect(await shown()).toMatchObject({ subject: 'Confirm for {{appName}}', body: 'Hello {{greeting}}\n\n{{message}}', custom: true })
    // Ada's editor still shows the built-in body: saving it is refused, and so is a reset.
    const stale = await as('ada', 'email.saveTemplate', { kind: 'verification', body: '{{message}}', base: { body: read.body } })
    expectConflict(stale, 'body', 'bea', 'Hello {{greeting}}\n\n{{message}}')
    const reset = await as('ada', 'email.resetTemplate', {
      kind: 'verification',
      base: { subject: 'Confirm for {{appName}}', body: read.body },
    })
    expectConflict(reset, 'body', 'bea', 'Hello {{greeting}}\n\n{{message}}')
    expect((await shown()).body).toBe('Hello {{greeting}}\n\n{{message}}')
    expect(await configChanges('mail.templates.verification')).toEqual([
      [
        { key: 'mail.templates.verification.body', from: null, to: 'Hello {{greeting}}\n\n{{message}}' },
        { key: 'mail.templates.verification.subject', from: null, to: read.subject },
      ],
      [{ key: 'mail.templates.verification.subject', from: read.subject, to: 'Confirm for {{appName}}' }],
    ])
  })
})

describe('organizations', () => {
  it('a stale rename of the slug keeps the other admin’s name; renaming over their name is a conflict naming them', async () => {
    const { organization } = await ok<{ organization: { id: string } }>(null, 'orgs.create', {
      name: 'Family',
      slug: 'family',
      ownerUserId: admins.ada.user.id,
    })
    const id = organization.id
    await ok('bea', 'orgs.update', { organizationId: id, name: 'The family', base: { name: 'Family' } })
    const moved = await ok<{ organization: { name: string; slug: string } }>('ada', 'orgs.update', {
      organizationId: id,
      slug: 'household',
      base: { slug: 'family' },
    })
    expect(moved.organization).toMatchObject({ name: 'The family', slug: 'household' })
    expectConflict(
      await as('ada', 'orgs.update', { organizationId: id, name: 'Home', base: { name: 'Family' } }),
      'name',
      'bea',
      'The family',
    )
    expect(await changesOf('organization.updated', id)).toEqual([
      [{ key: 'name', from: 'Family', to: 'The family' }],
      [{ key: 'slug', from: 'family', to: 'household' }],
    ])
  })
})

describe('generic OAuth providers', () => {
  it('a stale save of the scopes keeps the other admin’s client id; saving the client id they changed is a conflict naming them', async () => {
    const provider = {
      providerId: 'corp',
      name: 'Corp SSO',
      authorizationUrl: 'https://idp.example.com/authorize',
      tokenUrl: 'https://idp.example.com/token',
      clientId: 'corp-client',
      clientSecret: 'corp-secret-FROTZ',
      scopes: ['openid'],
      pkce: true,
    }
    await ok(null, 'genericOAuth.save', provider)
    await ok('bea', 'genericOAuth.save', { providerId: 'corp', clientId: 'corp-2', base: { clientId: 'corp-client' } })
    const saved = await ok<Record<string, unknown>>('ada', 'genericOAuth.save', {
      providerId: 'corp',
      scopes: ['openid', 'email'],
      base: { scopes: ['openid'] },
    })
    expect(saved).toMatchObject({ clientId: 'corp-2', scopes: ['openid', 'email'], hasClientSecret: true, name: 'Corp SSO' })
    const stale = await as('ada', 'genericOAuth.save', { providerId: 'corp', clientId: 'corp-3', base: { clientId: 'corp-client' } })
    expectConflict(stale, 'clientId', 'bea', 'corp-2')
    expect(server.gatehouse.config.get().genericOAuth.config[0]).toMatchObject({ clientId: 'corp-2', scopes: ['openid', 'email'] })
    const log = JSON.stringify((await queryAuditEvents(server.gatehouse.ctx, { type: 'config.changed' }, {})).events)
    expect(log).toContain('corp-2')
    expect(log).not.toContain('corp-secret-FROTZ')
  })
})

describe('social providers', () => {
  it('a stale save of the scopes keeps the other admin’s client id; saving the linking switch they changed is a conflict naming them', async () => {
    await ok(null, 'providers.update', {
      id: 'github',
      enabled: false,
      clientId: 'gh-1',
      clientSecret: 'gh-secret-XYZZY',
      scopes: ['user:email'],
      trustedForLinking: false,
      overrides: {},
    })
    await ok('bea', 'providers.update', {
      id: 'github',
      clientId: 'gh-2',
      trustedForLinking: true,
      base: { clientId: 'gh-1', trustedForLinking: false },
    })
    const saved = await ok<Record<string, unknown>>('ada', 'providers.update', {
      id: 'github',
      scopes: ['user:email', 'read:user'],
      base: { scopes: ['user:email'] },
    })
    expect(saved).toMatchObject({ clientId: 'gh-2', scopes: ['user:email', 'read:user'], trustedForLinking: true, hasClientSecret: true })
    // Another provider's linking switch since does not count as a change of GitHub's.
    await ok('ada', 'providers.update', { id: 'gitlab', trustedForLinking: true, base: { trustedForLinking: false } })
    expectConflict(
      await as('ada', 'providers.update', {
        id: 'github',
        trustedForLinking: false,
        enabled: true,
        base: { trustedForLinking: false, enabled: false },
      }),
      'trustedForLinking',
      'bea',
      true,
    )
    expect(server.gatehouse.config.get().socialProviders.github).toMatchObject({ enabled: false, clientId: 'gh-2' })
    const log = JSON.stringify((await queryAuditEvents(server.gatehouse.ctx, { type: 'config.changed' }, {})).events)
    expect(log).toContain('gh-2')
    expect(log).not.toContain('gh-secret-XYZZY')
  })

  it('a provider never configured, shown off, stays off when a save gives it only a client id (the switch left as shown)', async () => {
    expect(server.gatehouse.config.get().socialProviders.discord).toBeUndefined()
    const saved = await ok<Record<string, unknown>>('ada', 'providers.update', {
      id: 'discord',
      clientId: 'dc-1',
      clientSecret: 'dc-secret',
      base: { clientId: '' },
    })
    expect(saved).toMatchObject({ enabled: false, status: 'configured', clientId: 'dc-1' })
    expect(server.gatehouse.config.get().socialProviders.discord).toMatchObject({ enabled: false, clientId: 'dc-1' })
    // Switched on by name, it is on; a later save of another field leaves it on.
    await ok('ada', 'providers.update', { id: 'discord', enabled: true, base: { enabled: false } })
    expect(await ok('ada', 'providers.update', { id: 'discord', scopes: ['identify'], base: { scopes: [] } })).toMatchObject({
      enabled: true,
      status: 'enabled',
    })
  })
})
