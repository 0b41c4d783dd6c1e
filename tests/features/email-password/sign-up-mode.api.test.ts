import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openGatehouse } from '../../../server/gatehouse.js'
import type { Logger } from '../../../server/log.js'
import { inviteToSignUp, systemActor } from '../../../server/features/admin/index.js'
import { HttpClient, signUp, uniqueEmail } from '../../helpers/http.js'
import { officialClient } from '../../helpers/members.js'
import { silentLogger, startTestServer, type TestServer } from '../../helpers/server.js'

/**
 * Issue 47 §2: `signUp.mode` — "open" (better-auth's behaviour, the default), "invitation" (a
 * pending organization invitation or an administrator's sign-up invitation for the address), or
 * "closed" (better-auth's sign-up-disabled answer). Through the API and the official client.
 */

let server: TestServer
const PASSWORD = 'correct horse battery'
const CLOSED = { code: 'EMAIL_PASSWORD_SIGN_UP_DISABLED', message: 'Email and password sign up is not enabled' }
const INVITATION_REQUIRED = { code: 'SIGN_UP_INVITATION_REQUIRED', message: 'Sign up is by invitation only' }

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server?.close())

const mode = (m: 'open' | 'invitation' | 'closed') => server.gatehouse.config.update({ signUp: { mode: m } })
const signUpBody = (email: string) => ({ email, password: PASSWORD, name: 'New Person' })

describe('signUp.mode', () => {
  it('"open" by default: the official client signs up anyone', async () => {
    expect(server.gatehouse.ctx.config().signUp.mode).toBe('open')
    const { client } = officialClient(server)
    const email = uniqueEmail('open')
    const res = await client.signUp.email(signUpBody(email))
    expect(res.error).toBeNull()
    expect(res.data?.user.email).toBe(email)
  })

  it('"closed" refuses every sign-up with better-auth\'s sign-up-disabled answer', async () => {
    mode('closed')
    try {
      const { client } = officialClient(server)
      const res = await client.signUp.email(signUpBody(uniqueEmail('closed')))
      expect(res.error).toMatchObject({ status: 400, ...CLOSED })
      const raw = await new HttpClient(server.base).post('/sign-up/email', signUpBody(uniqueEmail('closed')))
      expect([raw.status, raw.body]).toEqual([400, CLOSED])
      // An administrator's invitation does not open a closed server.
      const email = uniqueEmail('closed-invited')
      await inviteToSignUp(server.gatehouse.ctx, systemActor('cli'), { email }, null)
      const invited = await new HttpClient(server.base).post('/sign-up/email', signUpBody(email))
      expect([invited.status, invited.body]).toEqual([400, CLOSED])
    } finally {
      mode('open')
    }
  })

  it('"invitation" refuses an address nobody invited (known or not, alike), and lets an admin-invited address sign up', async () => {
    const existing = await signUp(server.base)
    mode('invitation')
    try {
      const { client } = officialClient(server)
      const res = await client.signUp.email(signUpBody(uniqueEmail('uninvited')))
      expect(res.error).toMatchObject({ status: 403, ...INVITATION_REQUIRED })
      const known = await new HttpClient(server.base).post('/sign-up/email', signUpBody(existing.email))
      expect([known.status, known.body]).toEqual([403, INVITATION_REQUIRED])

      const email = uniqueEmail('invited')
      const invitation = await inviteToSignUp(server.gatehouse.ctx, systemActor('cli'), { email: email.toUpperCase() }, null)
      expect(invitation.email).toBe(email)
      const link = new URL(invitation.link)
      expect(link.pathname).toBe('/api/auth/ui/sign-up')
      expect(link.searchParams.get('email')).toBe(email)
      expect(link.searchParams.get('invitation')).toMatch(/^[A-Za-z0-9]{32}$/)
      const invited = await officialClient(server).client.signUp.email(signUpBody(email))
      expect(invited.error).toBeNull()
      expect(invited.data?.user.email).toBe(email)

      // The invitation lasts 7 days.
      const late = uniqueEmail('late')
      await inviteToSignUp(server.gatehouse.ctx, systemActor('cli'), { email: late }, null)
      server.clock.advanceSeconds(7 * 86_400 + 1)
      const expired = await new HttpClient(server.base).post('/sign-up/email', signUpBody(late))
      expect([expired.status, expired.body]).toEqual([403, INVITATION_REQUIRED])
    } finally {
      mode('open')
    }
  })

  it('"invitation" lets an address with a pending organization invitation sign up', async () => {
    const owner = await signUp(server.base, { name: 'Owner' })
    const org = await owner.client.post<{ id: string }>('/organization/create', { name: 'Acme', slug: `acme-${Date.now().toString(36)}` })
    expect(org.status, org.text).toBe(200)
    mode('invitation')
    try {
      const email = uniqueEmail('orginvited')
      const refused = await new HttpClient(server.base).post('/sign-up/email', signUpBody(email))
      expect([refused.status, refused.body]).toEqual([403, INVITATION_REQUIRED])
      const inv = await owner.client.post('/organization/invite-member', { email, role: 'member', organizationId: org.body.id })
      expect(inv.status, inv.text).toBe(200)
      const res = await officialClient(server).client.signUp.email(signUpBody(email))
      expect(res.error).toBeNull()
      expect(res.data?.user.email).toBe(email)
    } finally {
      mode('open')
    }
  })

  it('inviting needs user:create and a valid address', async () => {
    const plain = await signUp(server.base)
    const { userActor } = await import('../../../server/features/admin/index.js')
    const { findUserById } = await import('../../../server/core/users.js')
    const row = await findUserById(server.gatehouse.ctx, plain.user.id)
    await expect(inviteToSignUp(server.gatehouse.ctx, userActor(row!), { email: uniqueEmail('x') }, null)).rejects.toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS',
    })
    await expect(inviteToSignUp(server.gatehouse.ctx, systemActor('cli'), { email: 'not an email' }, null)).rejects.toMatchObject({
      status: 400,
      code: 'INVALID_EMAIL',
    })
  })

  it('the start-up log says while anyone who reaches the server can create an account', async () => {
    const started = async (config: Record<string, unknown>): Promise<string[]> => {
      const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-sign-up-log-'))
      const lines: string[] = []
      const logger: Logger = { ...silentLogger, info: (m: string) => lines.push(m) }
      const gatehouse = await openGatehouse({
        dataDir,
        port: 0,
        host: '127.0.0.1',
        secret: 'test-secret-0123456789-abcdefghijkl',
        config,
        logger,
      })
      await gatehouse.close()
      rmSync(dataDir, { recursive: true, force: true })
      return lines.filter((line) => line.startsWith('sign-up is open'))
    }
    expect(await started({})).toEqual([
      'sign-up is open: anyone who reaches this server can create an account (email and password), which signs in at once and is vouched for to apps once its email is verified; set signUp.mode to "invitation" or "closed" to restrict it',
    ])
    expect(await started({ identity: { requireVerifiedEmail: false } })).toEqual([
      'sign-up is open: anyone who reaches this server can create an account (email and password), and email verification is not required; set signUp.mode to "invitation" or "closed" to restrict it',
    ])
    expect(await started({ emailAndPassword: { requireEmailVerification: true } })).toEqual([
      'sign-up is open: anyone who reaches this server can create an account (email and password), which must verify its email first; set signUp.mode to "invitation" or "closed" to restrict it',
    ])
    expect(await started({ signUp: { mode: 'invitation' } })).toEqual([])
    expect(await started({ emailAndPassword: { disableSignUp: true } })).toEqual([])
  })
})
