import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { contract, isOpName } from '../../server/panel/contract.js'

/**
 * Issue 31: a view-only admin sees no control whose change the server would refuse. Every change a
 * renderer file makes through useOpMutation('op') is guarded in that file by renderer/src/access.tsx
 * (<Allowed op>, <Editable op>, useMay(op), access.may(op)), so a view added later cannot forget it.
 */

const root = join(import.meta.dirname, '../../renderer/src')
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : /\.tsx?$/.test(name) ? [path] : []
  })

/** The ops a file guards: op="x", op={'x'}, op={['x', 'y']}, useMay('x', …), may('x'). */
function guardedIn(source: string): Set<string> {
  const guarded = new Set<string>()
  const lists = [
    ...source.matchAll(/\bop=(?:"([^"]+)"|\{\s*'([^']+)'\s*\}|\{\s*\[([^\]]+)\]\s*\})/g),
    ...source.matchAll(/\b(?:useMay|may)\(([^)]*)\)/g),
  ]
  for (const match of lists) {
    for (const part of match.slice(1)) for (const op of part?.match(/[\w-]+\.[\w-]+/g) ?? []) guarded.add(op)
  }
  return guarded
}

describe('every change control is guarded by what the signed-in admin may do', () => {
  it('each useOpMutation of a changing operation has a guard for it in the same file', () => {
    const unguarded: string[] = []
    let seen = 0
    for (const file of files(root)) {
      const source = readFileSync(file, 'utf8')
      const guarded = guardedIn(source)
      for (const [, op] of source.matchAll(/useOpMutation\('([^']+)'\)/g)) {
        if (!op || !isOpName(op) || !contract[op].mutates) continue
        seen++
        if (!guarded.has(op)) unguarded.push(`${relative(root, file)}: ${op}`)
      }
    }
    expect(seen).toBeGreaterThan(50)
    expect(unguarded).toEqual([])
  })

  it('the check sees guards and their absence', () => {
    expect([...guardedIn(`<Allowed op="users.ban"><Editable op={['a.b', 'c.d']}>useMay('e.f') op={'g.h'}`)].sort()).toEqual([
      'a.b',
      'c.d',
      'e.f',
      'g.h',
      'users.ban',
    ])
    expect(guardedIn(`useOpMutation('users.ban')`).size).toBe(0)
  })
})
