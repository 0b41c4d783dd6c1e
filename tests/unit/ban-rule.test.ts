/**
 * "Is this person banned now" is one function (server/core/bans.ts). Sessions, API keys, forward
 * auth, OIDC, LDAP and SAML call it; a second copy of the comparison anywhere in server/ fails here,
 * so a reader cannot drift (an earlier copy in the API-key path ignored the ban's expiry).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { banLapsed, bannedNow } from '../../server/core/bans.js'

const serverDir = join(import.meta.dirname, '../../server')
const RULE_FILE = 'core/bans.ts'

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* sources(path)
    else if (/\.tsx?$/.test(name)) yield path
  }
}

/**
 * Reading a ban: the expiry compared with a time, or a stored user's banned flag tested for a
 * decision (the admin feature's input and patch objects, which set a ban, are not reads).
 */
const BAN_READS = [
  /banExpires\??\.(getTime|valueOf)\(\)\s*[<>]/,
  /banExpires[^\n]*[<>]=?\s*(now|ctx\.clock|Date\.now)/,
  /(?<!\b(data|patch|input))\.banned\s*(===|!==)\s*true/,
  /(?<!\b(data|patch|input))\.banned\s*&&/,
]

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
  it('is written once in server/', () => {
    const copies: string[] = []
    for (const file of sources(serverDir)) {
      const rel = relative(serverDir, file)
      if (rel === RULE_FILE) continue
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (BAN_READS.some((re) => re.test(line))) copies.push(`${rel}:${i + 1}: ${line.trim()}`)
        })
    }
    expect(copies).toEqual([])
  })
})
