/**
 * The parts of docs/ARCHITECTURE.md that drift when the code moves (issue 39): the list of
 * features and the hooks core calls. A new feature folder or a new Feature hook fails here until
 * the page names it, and a name the page keeps after the code dropped it fails too.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: a plain JavaScript build script without declarations
import { listedFolders } from '../../bin/gen-features.js'

const root = join(import.meta.dirname, '../..')
const doc = readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8')

/** Members of `export interface Feature { … }` in server/feature.ts, by name. */
function featureMembers(): string[] {
  const source = readFileSync(join(root, 'server/feature.ts'), 'utf8')
  const body = /export interface Feature \{([\s\S]*?)\n\}/.exec(source)?.[1] ?? ''
  return [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1] as string)
}

/** What a feature declares (data, not a call from core): named in the folder table and the example instead. */
const DECLARATIONS = ['id', 'config', 'tables', 'columns', 'errors', 'routes', 'rateLimit', 'panel']

describe('docs/ARCHITECTURE.md', () => {
  it('lists exactly the features server/features/index.ts lists, in its order', () => {
    const sentence = /The features today: ([^(]+)\(`server\/features\/index\.ts`\)/.exec(doc)
    expect(sentence, 'the sentence "The features today: … (`server/features/index.ts`)"').not.toBeNull()
    const named = (sentence?.[1] ?? '')
      .replace(/\s+/g, ' ')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean)
    expect(named).toEqual(listedFolders(root))
  })

  it('names every hook core calls, and no hook that is gone', () => {
    const paragraph = /The hooks core calls[\s\S]*?\n\n/.exec(doc)?.[0] ?? ''
    const hooks = featureMembers().filter((name) => !DECLARATIONS.includes(name))
    expect(hooks.length).toBeGreaterThan(8)
    expect(hooks.filter((hook) => !paragraph.includes(`\`${hook}\``))).toEqual([])
    const named = [...paragraph.matchAll(/`(\w+)`/g)].map((m) => m[1] as string).filter((name) => /^[a-z][A-Za-z]+$/.test(name))
    const members = new Set(featureMembers())
    const documentedHooks = named.filter(
      (name) => members.has(name) || /^(signed|signing|request|session|read|user|mail|panel|before|oauth)/.test(name),
    )
    expect(documentedHooks.filter((name) => !members.has(name))).toEqual([])
  })
})
