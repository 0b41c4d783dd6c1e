/**
 * "Is this person banned now" is one function (server/core/bans.ts). Sessions, API keys, forward
 * auth, OIDC, LDAP and SAML call it (the overview counts with its SQL form, bannedNowWhere:
 * tests/features/overview/counts.api.test.ts); tests/unit/one-copy.test.ts fails on a second copy
 * of the comparison anywhere in server/.
 */
import { describe, expect, it } from 'vitest'
import { banLapsed, bannedNow } from '../../server/core/bans.js'

describe('the ban rule', () => {
  const now = Date.UTC(2026, 0, 1)
  it('counts a ban without expiry, and one whose expiry is ahead', () => {
    expect(bannedNow({ banned: true, banExpires: null }, now)).toBe(true)
    expect(bannedNow({ banned: true, banExpires: new Date(now + 1) }, now)).toBe(true)
  })
  it('does not count a lapsed ban, nor no ban', () => {
    expect(bannedNow({ banned: true, banExpires: new Date(now) }, now)).toBe(false)
    expect(bannedNow({ banned: true, banExpires: new Date(now - 1) }, now)).toBe(false)
    expect(bannedNow({ banned: false, banExpires: new Date(now + 1000) }, now)).toBe(false)
    expect(bannedNow({ banned: null, banExpires: null }, now)).toBe(false)
    expect(banLapsed({ banned: true, banExpires: new Date(now - 1) }, now)).toBe(true)
    expect(banLapsed({ banned: true, banExpires: null }, now)).toBe(false)
  })
})
