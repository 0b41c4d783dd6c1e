import { createAccessControl } from 'better-auth/plugins/access'
import { describe, expect, it } from 'vitest'
import { joinRoles, parseRoleList, rolesGrant, type Statements, statementsGrant } from '../../server/core/access-control.js'

const STATEMENTS = {
  user: ['create', 'list', 'ban', 'delete'],
  session: ['list', 'revoke'],
  team: ['create', 'update'],
} as const

const ROLES: Record<string, Statements> = {
  admin: { user: ['create', 'list', 'ban', 'delete'], session: ['list', 'revoke'], team: ['create'] },
  support: { user: ['list'], session: ['list'] },
  nobody: { user: [], session: [] },
}

/** A small deterministic generator, so a failing case can be replayed from its index. */
function* requests(count: number): Generator<Record<string, string[]>> {
  let seed = 12345
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed % n
  }
  const resources = [...Object.keys(STATEMENTS), 'unknown']
  for (let i = 0; i < count; i++) {
    const request: Record<string, string[]> = {}
    const size = next(3)
    for (let r = 0; r < size; r++) {
      const resource = resources[next(resources.length)] ?? 'user'
      const pool = [...((STATEMENTS as Record<string, readonly string[]>)[resource] ?? []), 'made-up']
      request[resource] = Array.from({ length: next(3) }, () => pool[next(pool.length)] ?? 'made-up')
    }
    yield request
  }
}

describe('the access engine', () => {
  it("grants exactly what better-auth's createAccessControl grants, for every role and 2000 generated requests", () => {
    const ac = createAccessControl(STATEMENTS)
    let granted = 0
    let index = 0
    for (const request of requests(2000)) {
      for (const [name, statements] of Object.entries(ROLES)) {
        const theirs = ac.newRole(statements as never).authorize(request as never).success
        const ours = statementsGrant(statements, request)
        expect(ours, `request #${index} ${JSON.stringify(request)} for ${name}`).toBe(theirs)
        if (ours) granted++
      }
      index++
    }
    // The generator must produce both answers, or the comparison proves nothing.
    expect(granted).toBeGreaterThan(100)
    expect(granted).toBeLessThan(2000 * 3)
  })

  it('denies an empty request, an empty action list, an unknown role and an unknown resource', () => {
    expect(statementsGrant(ROLES.admin ?? {}, {})).toBe(false)
    expect(statementsGrant(ROLES.admin ?? {}, { user: [] })).toBe(false)
    expect(statementsGrant(ROLES.admin ?? {}, { planet: ['destroy'] })).toBe(false)
    expect(rolesGrant(ROLES, ['ghost'], { user: ['list'] })).toBe(false)
    expect(rolesGrant(ROLES, ['nobody', 'support'], { user: ['list'] })).toBe(true)
    expect(rolesGrant(ROLES, ['support'], { user: ['list'], session: ['revoke'] })).toBe(false)
    // Own-property lookups only: a role named like an Object.prototype member grants nothing.
    expect(rolesGrant(ROLES, ['constructor', '__proto__', 'toString'], { user: ['list'] })).toBe(false)
  })

  it('parses and joins role lists one way for every caller', () => {
    expect(parseRoleList(' admin, ,support,, ')).toEqual(['admin', 'support'])
    expect(parseRoleList(['admin,member', ' owner '])).toEqual(['admin', 'member', 'owner'])
    expect(parseRoleList(null)).toEqual([])
    // One role without a comma takes a shorter way; it must answer as the general one does.
    expect(parseRoleList(' admin ')).toEqual(['admin'])
    expect(parseRoleList('admin')).toEqual(['admin'])
    expect(parseRoleList('')).toEqual([])
    expect(parseRoleList(' \t ')).toEqual([])
    expect(joinRoles(['admin', ' member ', ''])).toBe('admin,member')
    expect(joinRoles('owner')).toBe('owner')
  })
})
