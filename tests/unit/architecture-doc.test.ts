/**
 * The parts of docs/ARCHITECTURE.md that drift when the code moves (issue 39): the list of
 * features and the hooks core calls. A new feature folder or a new Feature hook fails here until
 * the page names it, and a name the page keeps after the code dropped it fails too. And where tests
 * live ("Where tests live"): a feature's in tests/features/<its folder>/, nowhere else.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: a plain JavaScript build script without declarations
import { listedFolders } from '../../bin/gen-features.js'
import { SIGN_IN_TABLE } from '../../server/core/sign-in-table.js'

const root = join(import.meta.dirname, '../..')
const doc = readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8')

/**
 * Members of the Feature type by name: `export interface Feature extends FeatureHooks { … }` in
 * server/feature.ts and the hooks core and HTTP call, `export interface FeatureHooks { … }` in
 * server/http/feature-hooks.ts.
 */
function featureMembers(): string[] {
  const bodies = [
    ['server/feature.ts', /export interface Feature extends FeatureHooks \{([\s\S]*?)\n\}/],
    ['server/http/feature-hooks.ts', /export interface FeatureHooks \{([\s\S]*?)\n\}/],
  ] as const
  return bodies.flatMap(([path, pattern]) => {
    const body = pattern.exec(readFileSync(join(root, path), 'utf8'))?.[1] ?? ''
    expect(body, path).not.toBe('')
    return [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1] as string)
  })
}

/** `.dependency-cruiser.cjs`'s FLOORS, read from its source: each floor's name and paths, from the top. */
function cruiserFloors(): { floor: string; paths: string[] }[] {
  const source = readFileSync(join(root, '.dependency-cruiser.cjs'), 'utf8')
  const list = /const FLOORS = \[([\s\S]*?)\n\]\n/.exec(source)?.[1] ?? ''
  return [...list.matchAll(/floor: '([^']+)',\s*paths: \[([^\]]*)\]/g)].map((m) => ({
    floor: m[1] as string,
    paths: [...(m[2] as string).matchAll(/'([^']+)'/g)].map((p) => p[1] as string),
  }))
}

/** What a feature declares (data, not a call from core): named in the folder table and the example instead. */
const DECLARATIONS = ['id', 'config', 'tables', 'columns', 'errors', 'routes', 'rateLimit', 'metrics', 'panel']

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

  it('lists the sign-in table as server/core/sign-in-table.ts has it: each row, its outlets, in order', () => {
    const section = /## One sign-in table\n([\s\S]*?)\n## /.exec(doc)?.[1] ?? ''
    const rows = [...section.matchAll(/^\d+\. \*\*([\w-]+)\*\* \(([a-z, ]+)[;)]/gm)].map((m) => `${m[1]} (${m[2]})`)
    expect(rows).toEqual(SIGN_IN_TABLE.map((row) => `${row.step} (${row.outlets.join(', ')})`))
  })

  it('names the command line as server/cli.ts dispatches it: every command, no other', async () => {
    const cli = readFileSync(join(root, 'server/cli.ts'), 'utf8')
    // Its own (`command === 'serve'`, its CORE_COMMANDS' names) and the features' (server/features/commands.ts).
    const { featureCommands } = await import('../../server/features/commands.js')
    const dispatched = [
      ...new Set([
        ...[...cli.matchAll(/command === '([a-z]+)'|^ {4}name: '([a-z]+)'/gm)].map((m) => (m[1] ?? m[2]) as string),
        ...featureCommands.map((command) => command.name),
      ]),
    ].filter((name) => !['help', 'version'].includes(name))
    expect(dispatched).toEqual(expect.arrayContaining(['serve', 'user', 'migrate', 'jwt', 'saml']))
    const listed = /the command line\s*\(`gatehouse ([a-z|]+)`\)/.exec(doc)?.[1]?.split('|') ?? []
    expect(listed.sort()).toEqual(dispatched.sort())
  })

  it('names every route answered directly from node:http (direct: true), and no other', async () => {
    const { features } = await import('../../server/features/index.js')
    const { coreRoutes } = await import('../../server/http/routes/core.js')
    const routes = [...coreRoutes, ...features.flatMap((f) => f.routes ?? [])]
    const direct = routes.filter((r) => (r as { direct?: boolean }).direct).map((r) => r.path)
    const paragraph = /- A route declared `direct: true` \(([^)]*)\)/.exec(doc)?.[1] ?? ''
    const named = [...paragraph.matchAll(/`(\/[\w/-]+)`/g)].map((m) => m[1])
    expect(named.sort()).toEqual(direct.sort())
  })

  it('lists the floors as .dependency-cruiser.cjs enforces them: each floor, its paths, in order', () => {
    const table = /<!-- floors:[^\n]*-->\n([\s\S]*?)<!-- \/floors -->/.exec(doc)?.[1] ?? ''
    const rows = table
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| floor |'))
      .map((line) => {
        const [floor = '', modules = ''] = line
          .split('|')
          .slice(1, 3)
          .map((cell) => cell.trim())
        return { floor, paths: [...modules.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string) }
      })
    const floors = cruiserFloors()
    expect(floors.map((f) => f.floor)).toEqual(['composition', 'features', 'frame', 'core', 'base'])
    expect(rows).toEqual(floors)
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

describe('where tests live (docs/ARCHITECTURE.md, "Where tests live")', () => {
  const testsDir = join(root, 'tests')
  const features = readdirSync(join(root, 'server/features'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
  /** Every file below a folder, as paths relative to the repository. */
  const filesBelow = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile())
      .map((entry) => relative(root, join(entry.parentPath, entry.name)))
  /** Folders of tests/ that hold no suites, and those named for a mechanism, where a feature's name may appear. */
  const NOT_BY_KIND = ['features', 'helpers', 'fixtures', 'setup', 'cli', 'multi', 'bundle', 'runtime', 'db', 'main']

  it('names each folder of tests/features after a feature folder of server/features', () => {
    expect(features.length).toBeGreaterThan(30)
    const folders = readdirSync(join(testsDir, 'features'), { withFileTypes: true })
    expect(folders.filter((entry) => !entry.isDirectory()).map((entry) => entry.name)).toEqual([])
    expect(folders.map((entry) => entry.name).filter((name) => !features.includes(name))).toEqual([])
    const suites = filesBelow(join(testsDir, 'features')).filter((path) => /\.test\.tsx?$/.test(path))
    expect(suites.length).toBeGreaterThan(100)
  })

  it('keeps no suite named after a feature in the folders by kind (tests/api, tests/panel, tests/unit, …)', () => {
    const byKind = readdirSync(testsDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !NOT_BY_KIND.includes(entry.name))
      .map((entry) => entry.name)
    expect(byKind).toEqual(expect.arrayContaining(['api', 'panel', 'unit']))
    const suites = [
      ...readdirSync(testsDir)
        .filter((name) => /\.test\.tsx?$/.test(name))
        .map((name) => `tests/${name}`),
      ...byKind.flatMap((folder) => filesBelow(join(testsDir, folder))).filter((path) => /\.test\.tsx?$/.test(path)),
    ]
    const namedAfterAFeature = (path: string) => {
      const base = path.slice(path.lastIndexOf('/') + 1)
      return features.find((feature) => base.startsWith(`${feature}-`) || base.startsWith(`${feature}.`))
    }
    expect(suites.filter(namedAfterAFeature).map((path) => `${path} → tests/features/${namedAfterAFeature(path)}/`)).toEqual([])
    // A suite at the top of tests/ has no home either: it belongs in a folder.
    expect(suites.filter((path) => path.split('/').length === 2)).toEqual([])
  })
})
