import { Client, InvalidCredentialsError, NoSuchObjectError } from 'ldapts'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createAppPassword, revokeAppPassword } from '../../../server/features/app-passwords/rules.js'
import { verifiedPerson } from './edge-helpers.js'
import { BASE, type LdapServer, type Person, startLdapServer } from './helpers.js'

/**
 * A connection bound with an app password keeps reading only while that app password opens the
 * account: revoked or expired, the next operation is answered invalidCredentials (49), never a result.
 */

let server: LdapServer
let svc: Person
beforeAll(async () => {
  server = await startLdapServer()
  svc = await verifiedPerson(server, 'svc', 'Service', 'admin')
})
afterAll(() => server?.close())

const people = `ou=people,${BASE}`
const uids = async (c: Client) =>
  (await c.search(people, { scope: 'one', filter: '(uid=svc)', attributes: ['uid'] })).searchEntries.map((e) => e.uid)

it('a revoked app password ends its bound connection at the next operation', async () => {
  const app = await createAppPassword(server.gatehouse.ctx, svc.id, { name: 'nas' }, null)
  const c = new Client({ url: server.url, timeout: 30_000 })
  await c.bind(svc.dn, app.password)
  expect(await uids(c)).toEqual(['svc'])
  await revokeAppPassword(server.gatehouse.ctx, svc.id, app.id, null)
  await expect(uids(c)).rejects.toBeInstanceOf(InvalidCredentialsError)
  // The binding is gone: later operations run anonymous (nothing below the base), whoami answers anonymous.
  await expect(c.compare(svc.dn, 'uid', 'svc')).rejects.toBeInstanceOf(NoSuchObjectError)
  expect(await c.exop('1.3.6.1.4.1.4203.1.11.3')).toMatchObject({ value: '' })
  await c.unbind()
})

it('an app password that expires ends its bound connection at the next operation', async () => {
  const app = await createAppPassword(server.gatehouse.ctx, svc.id, { name: 'short', expiresIn: 120 }, null)
  const c = new Client({ url: server.url, timeout: 30_000 })
  await c.bind(svc.dn, app.password)
  expect(await uids(c)).toEqual(['svc'])
  server.clock.advanceSeconds(121)
  await expect(uids(c)).rejects.toBeInstanceOf(InvalidCredentialsError)
  await c.unbind()
})
