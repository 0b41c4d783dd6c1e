import { eq } from 'drizzle-orm'
import { BusyError, Client, InvalidCredentialsError } from 'ldapts'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { passwordHashQueue } from '../../../server/crypto/hash-queue.js'
import { auditEvent } from '../../../server/db/schema.js'
import { RawConnection, verifiedPerson } from './edge-helpers.js'
import { type LdapServer, ldapUtilsMissing, PASSWORD, type Person, run, startLdapServer } from './helpers.js'

/**
 * Issue 48 §3: simple binds are counted per source (IPv4 address, IPv6 /64) by the HTTP request
 * limiter, under `ldap.rateLimit` (by default the HTTP sign-in rule: 3 per 10 s). Past the limit a
 * bind is answered busy (51) before its password is looked at, a correct one too, and the first
 * refusal is audited `security.rate-limited` like an HTTP sign-in's; another address is not
 * affected; once the window has passed (the injected clock), binds work again. Binds that succeed
 * do not use up the allowance.
 */

let server: LdapServer
let alice: Person
beforeAll(async () => {
  // The test server's limiter is off unless asked (tests/helpers/server.ts): on, as a real server's is.
  server = await startLdapServer({ config: { rateLimit: { enabled: true } } })
  alice = await verifiedPerson(server, 'alice', 'Alice Liddell')
})
afterAll(() => server?.close())

const rateLimitedRows = async () =>
  (await server.gatehouse.ctx.db.select().from(auditEvent).where(eq(auditEvent.type, 'security.rate-limited'))).map((row) => ({
    outcome: row.outcome,
    ipAddress: row.ipAddress,
    userAgent: row.userAgent,
    detail: row.detail,
  }))

it('past 3 failed binds in 10 s from one address: busy (51) without a password check, audited once; another address binds; after the window, binds work again', async () => {
  const here = await RawConnection.open(server.port)
  const there = await RawConnection.open(server.port, '127.0.0.2')
  try {
    // Binds that succeed are not counted: a client binding right at every request is never limited.
    for (let id = 1; id <= 5; id++) expect(await here.bind(id, alice.dn, PASSWORD)).toMatchObject({ code: 0 })
    // Three wrong passwords: each checked, each invalidCredentials.
    for (let id = 6; id <= 8; id++) expect(await here.bind(id, alice.dn, 'wrong guess')).toMatchObject({ code: 49 })

    const checks = vi.spyOn(passwordHashQueue, 'run')
    try {
      expect(await here.bind(9, alice.dn, 'another guess')).toMatchObject({
        code: 51,
        diagnostic: 'too many failed binds from your address; try again in 10 s',
      })
      // The right password, from the limited address: busy all the same, and not checked either.
      expect(await here.bind(10, alice.dn, PASSWORD)).toMatchObject({ code: 51 })
      expect(checks).not.toHaveBeenCalled()
    } finally {
      checks.mockRestore()
    }
    // ldapts and OpenLDAP's ldapwhoami from the same address see busy.
    const c = new Client({ url: server.url, timeout: 10_000 })
    await expect(c.bind(alice.dn, PASSWORD)).rejects.toBeInstanceOf(BusyError)
    await c.unbind()
    if (!ldapUtilsMissing) {
      const whoami = await run('/usr/bin/ldapwhoami', ['-x', '-H', server.url, '-D', alice.dn, '-w', PASSWORD])
      expect(whoami.code).toBe(51)
      expect(whoami.stderr).toContain('Server is busy (51)')
    }

    // Another source (127.0.0.2) has its own count.
    expect(await there.bind(1, alice.dn, PASSWORD)).toMatchObject({ code: 0 })
    expect(await there.bind(2, alice.dn, 'wrong guess')).toMatchObject({ code: 49 })

    // One audit row for the refused burst (not one per refused bind), like an HTTP sign-in's.
    expect(await rateLimitedRows()).toEqual([
      {
        outcome: 'failure',
        ipAddress: '127.0.0.1',
        userAgent: 'ldap',
        detail: { via: 'ldap', operation: 'bind', dn: alice.dn },
      },
    ])

    // The window passes: the same address binds again.
    server.clock.advanceSeconds(11)
    expect(await here.bind(11, alice.dn, PASSWORD)).toMatchObject({ code: 0 })
    if (!ldapUtilsMissing) {
      const whoami = await run('/usr/bin/ldapwhoami', ['-x', '-H', server.url, '-D', alice.dn, '-w', PASSWORD])
      expect(whoami).toMatchObject({ code: 0, stdout: `dn:${alice.dn}\n` })
    }
  } finally {
    here.destroy()
    there.destroy()
  }
}, 120_000)

it('ldap.rateLimit sets the rule (the shape of a rateLimit.customRules entry), read at every bind', async () => {
  server.clock.advanceSeconds(60)
  await server.gatehouse.config.update({ ldap: { rateLimit: { window: 60, max: 1 } } })
  const c = new Client({ url: server.url, timeout: 10_000 })
  try {
    await expect(c.bind(alice.dn, 'wrong guess')).rejects.toBeInstanceOf(InvalidCredentialsError)
    await expect(c.bind(alice.dn, 'wrong guess')).rejects.toBeInstanceOf(BusyError)
    // Still within its 60 s window (the default rule's 10 s would have passed).
    server.clock.advanceSeconds(30)
    await expect(c.bind(alice.dn, PASSWORD)).rejects.toBeInstanceOf(BusyError)
    server.clock.advanceSeconds(31)
    await c.bind(alice.dn, PASSWORD)
  } finally {
    await c.unbind()
  }
}, 60_000)
