import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { GatehouseConfigInput } from '../../server/config/schema.js'
import { queryAuditEvents } from '../../server/core/audit.js'
import type { PanelCaller } from '../../server/core/panel-caller.js'
import { findUserById } from '../../server/core/users.js'
import { createPanelService } from '../../server/panel/service.js'
import { HttpClient, signUp, uniqueEmail } from '../helpers/http.js'
import { silentLogger, startTestServer, type TestServer } from '../helpers/server.js'

/**
 * Issue 37 §15: README's config switching every sign-in method on, and its advice for testing from
 * one machine (the rate limiter off), run verbatim; the same switches made in the panel's Settings
 * are applied and audited like any configuration change.
 */

const README = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8')

/** The JSON block after `<!-- readme:<name> -->`, as the reader copies it. */
function readmeBlock(name: string): GatehouseConfigInput {
  const match = new RegExp(`<!-- readme:${name} -->\\n\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``).exec(README)
  if (!match?.[1]) throw new Error(`README has no block ${name}`)
  return JSON.parse(match[1]) as GatehouseConfigInput
}

const SWITCHES = [
  'magicLink',
  'emailOTP',
  'passkey',
  'twoFactor',
  'anonymous',
  'multiSession',
  'oneTimeToken',
  'deviceAuthorization',
] as const

/** An endpoint of each method: 404 while the method is off. */
const ENDPOINTS: Array<[string, string, unknown?]> = [
  ['POST', '/sign-in/magic-link', { email: 'someone@example.com' }],
  ['POST', '/email-otp/send-verification-otp', { email: 'someone@example.com', type: 'sign-in' }],
  ['GET', '/passkey/generate-register-options'],
  ['POST', '/two-factor/enable', { password: 'x' }],
  ['GET', '/multi-session/list-device-sessions'],
  ['GET', '/one-time-token/generate'],
  ['POST', '/device/code', { client_id: 'tv' }],
]

const servers: TestServer[] = []
afterAll(async () => {
  for (const s of servers) await s.close()
})

async function tries(server: TestServer, n: number): Promise<number[]> {
  const statuses: number[] = []
  const client = new HttpClient(server.base)
  for (let i = 0; i < n; i++)
    statuses.push((await client.post('/sign-in/email', { email: uniqueEmail('limit'), password: 'not the password' })).status)
  return statuses
}

describe("README's config with every sign-in method", () => {
  it('switches every method on, generic OAuth provider included', async () => {
    const config = readmeBlock('all-sign-in-methods')
    const server = await startTestServer({ config })
    servers.push(server)
    const effective = server.gatehouse.ctx.config()
    for (const key of SWITCHES) expect(effective[key].enabled, key).toBe(true)
    expect(effective.genericOAuth.config.map((p) => p.providerId)).toEqual(['keycloak'])
    const client = new HttpClient(server.base)
    for (const [method, path, body] of ENDPOINTS) {
      const answer = await client.request(method, path, body === undefined ? {} : { body })
      expect({ path, status: answer.status }).not.toEqual({ path, status: 404 })
    }
    // Anonymous sign-in answers with a user and a session.
    const anonymous = await client.post<{ user: { isAnonymous: boolean } }>('/sign-in/anonymous', {})
    expect(anonymous.status).toBe(200)
    expect(anonymous.body.user.isAnonymous).toBe(true)
  })

  it('with the limiter on, the fourth sign-in in 10 s from one address is refused; with the README block, none is', async () => {
    const limited = await startTestServer({ config: { rateLimit: { enabled: true } } })
    servers.push(limited)
    expect(await tries(limited, 4)).toEqual([401, 401, 401, 429])
    const off = await startTestServer({ config: { ...readmeBlock('all-sign-in-methods'), ...readmeBlock('rate-limit-off') } })
    servers.push(off)
    expect(await tries(off, 8)).toEqual(Array(8).fill(401))
  })

  it('the panel switches every method on, each switch audited as a configuration change', async () => {
    const server = await startTestServer()
    servers.push(server)
    const panel = createPanelService({
      gatehouse: server.gatehouse,
      apiURL: () => server.base,
      mode: 'browser',
      version: 'test',
      startedAt: Date.now(),
      logger: silentLogger,
    })
    const signedUp = await signUp(server.base, { name: 'Ada Admin' })
    expect((await panel.dispatch('users.setRole', { userId: signedUp.user.id, role: 'admin' })).ok).toBe(true)
    const row = await findUserById(server.gatehouse.ctx, signedUp.user.id)
    const ada: PanelCaller = { kind: 'admin', user: row!, access: 'full', meta: { ipAddress: '127.0.0.1', userAgent: 'gatehouse-panel' } }
    const patch = Object.fromEntries(SWITCHES.map((key) => [key, { enabled: true }]))
    const saved = await panel.dispatch('settings.update', { patch }, ada)
    expect(saved.ok).toBe(true)
    for (const key of SWITCHES) expect(server.gatehouse.ctx.config()[key].enabled, key).toBe(true)
    const [event] = (await queryAuditEvents(server.gatehouse.ctx, { type: 'config.changed' })).events
    expect(event?.actorUserId).toBe(signedUp.user.id)
    expect(event?.detail).toMatchObject({ via: 'panel', keys: SWITCHES.map((key) => `${key}.enabled`).sort() })
  })
})
