/**
 * Issue 51 §5: "adding a feature is one folder plus one line per tree", the recipe executed. In a
 * temporary copy of the repository this adds a feature `ping` by following docs/ARCHITECTURE.md's
 * numbered steps ("Adding a feature"): each action below names the step it carries out and the
 * words that step must say, so a step the page drops (or renumbers) fails here before anything
 * runs, and an action skipped fails the tools. Then, in the copy, what `npm test` runs for it: the
 * generator, the type check, the lint, the dependency check, and the tests that check features (the
 * unit tests, the settings-fields check of the panel side, and the new feature's own API test,
 * which starts the copy's server and asks GET /api/auth/ping). Finally: nothing outside the three
 * `ping` folders changed but the two list lines, the two words (README's row, the page's feature
 * sentence) and what the generator writes.
 */
import { execFile, execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..', '..')
const work = mkdtempSync(join(tmpdir(), 'gatehouse-recipe-'))
const copy = join(work, 'repo')
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** docs/ARCHITECTURE.md's "Adding a feature" steps, by number, each as one line of text. */
function recipeSteps(doc: string): Map<number, string> {
  const section = /^### Adding a feature\n([\s\S]*?)\n### /m.exec(doc)?.[1] ?? ''
  const steps = new Map<number, string>()
  for (const [, n, text] of section.matchAll(/^(\d+)\. ([\s\S]*?)(?=^\d+\. |^\n|(?![\s\S]))/gm))
    steps.set(Number(n), (text ?? '').replace(/\s+/g, ' ').trim())
  return steps
}

const read = (path: string) => readFileSync(join(copy, path), 'utf8')
function write(path: string, text: string): void {
  mkdirSync(dirname(join(copy, path)), { recursive: true })
  writeFileSync(join(copy, path), text)
}
/** Inserts `line` after the last line matching `after`. */
function insertAfterLast(path: string, after: RegExp, line: string): void {
  const lines = read(path).split('\n')
  const at = lines.findLastIndex((l) => after.test(l))
  if (at < 0) throw new Error(`${path}: no line matching ${after}`)
  lines.splice(at + 1, 0, line)
  write(path, lines.join('\n'))
}

interface Action {
  step: number
  /** What the step must say for this action to be what the page asks. */
  says: string[]
  apply(): void
}

/** The recipe for `ping`, step by step as docs/ARCHITECTURE.md writes it. */
const RECIPE: Action[] = [
  {
    step: 1,
    says: ['mkdir server/features/<name>', 'defineFeature({ id, routes })', '`server/features/index.ts`', 'import and array entry'],
    apply() {
      write(
        'server/features/ping/index.ts',
        `import { defineFeature } from '../../feature.js'
import { configSections } from './config.js'
import { PING_ERR } from './errors.js'
import { pingRoutes } from './routes.js'

/** Ping: GET /ping answers {pong: true} while \`ping.enabled\` (the feature the recipe test adds). */
export const pingFeature = defineFeature({
  id: 'ping',
  config: configSections,
  errors: PING_ERR,
  routes: pingRoutes,
})
`,
      )
      insertAfterLast(
        'server/features/index.ts',
        /^import \{ \w+ \} from '\.\/[\w-]+\/index\.js'$/,
        "import { pingFeature } from './ping/index.js'",
      )
      insertAfterLast('server/features/index.ts', /^ {2}\w+Feature,$/, '  pingFeature,')
    },
  },
  {
    step: 2,
    says: ['`defineRoute` in `routes.ts`', 'zod body/query', '`commands.ts`', 'export const commands: CommandDeclaration[]'],
    apply() {
      write(
        'server/features/ping/commands.ts',
        `import type { CommandDeclaration } from '../../feature.js'

/** \`gatehouse ping\`: prints pong. */
export const commands: CommandDeclaration[] = [
  {
    name: 'ping',
    synopsis: 'ping',
    summary: 'prints pong',
    usage: 'Usage: gatehouse ping\\n',
    run: async () => {
      process.stdout.write('pong\\n')
      return 0
    },
  },
]
`,
      )
      write(
        'server/features/ping/routes.ts',
        `import { z } from 'zod'
import type { AuthContext } from '../../core/context.js'
import { defineRoute } from '../../http/route.js'
import { pingError } from './errors.js'

const enabled = (ctx: AuthContext): boolean => ctx.config().ping.enabled

/** GET /ping: {pong: true}; \`?say=\` anything but ping is refused. */
export const pingRoutes = [
  defineRoute({
    method: 'GET',
    path: '/ping',
    query: z.object({ say: z.string().optional() }),
    enabled,
    handler: async ({ query }) => {
      if (query.say !== undefined && query.say !== 'ping') throw pingError(400, 'ONLY_PING')
      return { pong: true }
    },
  }),
]
`,
      )
    },
  },
  {
    step: 3,
    says: ['Messages in `errors.ts`', 'defineFeature({ errors })'],
    apply() {
      write(
        'server/features/ping/errors.ts',
        `import { APIError, type ErrorStatus } from '../../core/errors.js'

/** The ping feature's messages, spelled here only. */
export const PING_ERR = {
  ONLY_PING: 'Ping answers ping only',
} as const

export const pingError = (status: ErrorStatus, key: keyof typeof PING_ERR): APIError => new APIError(status, key, PING_ERR[key])
`,
      )
    },
  },
  {
    step: 4,
    says: [
      '`config.ts`',
      'export const configSections = { <key>: <schema> }',
      'defineFeature({ config: configSections })',
      "README's config table",
    ],
    apply() {
      write(
        'server/features/ping/config.ts',
        `import { z } from 'zod'

/** \`ping.*\`: off by default. */
export const pingConfig = z.object({ enabled: z.boolean().default(false) }).prefault({})

/** The config sections this feature owns, by path (its defineFeature declares them; bin/gen-features.js mounts them). */
export const configSections = { ping: pingConfig }
`,
      )
      insertAfterLast('README.md', /^\| `disabledPaths` \|/, '| `ping.enabled` | `false` | GET `/ping` answers `{"pong": true}` |')
    },
  },
  // Step 5 (tables and columns): ping stores nothing.
  {
    step: 6,
    says: [
      '`renderer/src/features/<name>/index.ts`',
      'definePanelFeature({ name, views, settings })',
      'one line in `renderer/src/features/index.ts`',
    ],
    apply() {
      write(
        'renderer/src/features/ping/index.ts',
        `import { definePanelFeature } from '../panel-feature'

/** The ping feature in the control panel (renderer/src/features/panel-feature.ts). */
export const pingPanel = definePanelFeature({
  name: 'ping',
  settings: [
    {
      section: 'application',
      fields: [{ path: 'ping.enabled', label: 'Ping', help: 'GET /ping answers that the server is there.', kind: 'switch' }],
    },
  ],
})
`,
      )
      insertAfterLast('renderer/src/features/index.ts', /^import \{ \w+ \} from '\.\/[\w-]+'$/, "import { pingPanel } from './ping'")
      insertAfterLast('renderer/src/features/index.ts', /^ {2}\w+Panel,$/, '  pingPanel,')
    },
  },
  {
    step: 7,
    says: ['`tests/helpers/server.ts`', '`tests/features/<name>/`'],
    apply() {
      write(
        'tests/features/ping/ping.api.test.ts',
        `import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startTestServer, type TestServer } from '../../helpers/server.js'

let on: TestServer
let off: TestServer
beforeAll(async () => {
  on = await startTestServer({ config: { ping: { enabled: true } } })
  off = await startTestServer()
})
afterAll(async () => {
  await on?.close()
  await off?.close()
})

describe('ping', () => {
  it('answers {pong: true} while ping.enabled', async () => {
    const res = await fetch(\`\${on.base}/ping\`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ pong: true })
  })

  it('refuses anything but ping in its catalogue words', async () => {
    const res = await fetch(\`\${on.base}/ping?say=hello\`)
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ code: 'ONLY_PING', message: 'Ping answers ping only' })
  })

  it('is absent while off, the default', async () => {
    expect((await fetch(\`\${off.base}/ping\`)).status).toBe(404)
  })

  it('gatehouse ping prints pong, and gatehouse --help lists it (commands.ts, gathered for server/cli.ts)', async () => {
    const { main } = await import('../../../server/cli.js')
    const written: string[] = []
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => written.push(String(chunk)) > 0)
    try {
      expect(await main(['ping'])).toBe(0)
      expect(await main(['--help'])).toBe(0)
    } finally {
      out.mockRestore()
    }
    const printed = written.join('')
    expect(printed).toContain('pong')
    expect(printed).toMatch(/gatehouse ping +\\(prints pong\\)/)
  })
})
`,
      )
    },
  },
  {
    step: 8,
    says: ['"The features today: …"', "in the list's order", "the command line's list", '`tests/unit/architecture-doc.test.ts`'],
    apply() {
      const doc = read('docs/ARCHITECTURE.md')
      const sentence = /(The features today: [^(]+?)( \(`server\/features\/index\.ts`\))/
      if (!sentence.test(doc)) throw new Error('docs/ARCHITECTURE.md: no sentence "The features today: …"')
      const commandLine = /(the command line\s*\(`gatehouse [a-z|]+)`\)/
      if (!commandLine.test(doc)) throw new Error('docs/ARCHITECTURE.md: no "the command line (`gatehouse …`)"')
      write('docs/ARCHITECTURE.md', doc.replace(sentence, '$1, ping$2').replace(commandLine, '$1|ping`)'))
    },
  },
]

/** Runs a command in the copy; answers its exit code and output. */
function run(command: string, args: string[], timeoutMs: number): Promise<{ code: number; output: string; seconds: number }> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' }
  // The outer run's worker variables and engine are not the copy's run.
  for (const name of Object.keys(env)) if (name.startsWith('VITEST') || name === 'GATEHOUSE_TEST_ENGINE') delete env[name]
  const started = Date.now()
  return new Promise((resolve) => {
    execFile(command, args, { cwd: copy, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
      resolve({ code, output: `${stdout}${stderr}`.slice(-8000), seconds: (Date.now() - started) / 1000 })
    })
  })
}

/** Every file of the tree below `dir` (node_modules left out), relative to it. */
const filesOf = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && !relative(dir, entry.parentPath).split('/').includes('node_modules'))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))

describe('adding a feature, as docs/ARCHITECTURE.md says (issue 51 §5)', () => {
  // Generous: on this 2-core machine, shared with other runs, the type check of the copy alone takes
  // about a minute and the copy's tests half a minute; nothing here waits on a clock.
  // Under a full parallel run on a loaded machine the whole took over 300 s once: 600 s bounds it.
  it('the recipe adds `ping` with one folder and one line per tree: the tools and the feature tests pass', {
    timeout: 600_000,
  }, async () => {
    // The page's steps say what the actions below do, step by step.
    const steps = recipeSteps(readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8'))
    for (const action of RECIPE) {
      const text = steps.get(action.step) ?? ''
      expect({ step: action.step, missing: action.says.filter((words) => !text.includes(words)) }).toEqual({
        step: action.step,
        missing: [],
      })
    }
    // And after the last of them, the checks: `npm test`.
    const last = Math.max(...RECIPE.map((action) => action.step)) + 1
    expect([...steps.keys()].at(-1)).toBe(last)
    expect(steps.get(last) ?? '', 'the last step runs `npm test`').toMatch(/^`npm test`/)

    // The sources as they are in the working tree (tracked and new files), node_modules linked.
    const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
      .split('\0')
      // This file stays out: the copy's checks judge the recipe, not this test's own text.
      .filter((path) => path && path !== 'tests/cli/feature-recipe.test.ts' && existsSync(join(root, path)))
    expect(files).toContain('bin/gen-features.js')
    for (const path of files) cpSync(join(root, path), join(copy, path))
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'))

    for (const action of RECIPE) action.apply()

    // `npm test`'s steps, in its order, in the copy.
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    for (const script of ['gen:features', 'typecheck', 'lint', 'check:deps']) {
      const result = await run(npm, ['run', '--silent', script], 480_000)
      console.log(`feature recipe: npm run ${script} in the copy took ${result.seconds} s`)
      expect({ script, code: result.code, output: result.code === 0 ? '' : result.output }).toEqual({ script, code: 0, output: '' })
    }
    // The tests that check features: the unit tests, the panel side's settings fields (a panel-project
    // file that needs no browser: run here without the renderer build), and ping's own.
    const config = join(work, 'vitest.recipe.mjs')
    writeFileSync(
      config,
      `export default { test: ${JSON.stringify({
        root: copy,
        include: ['tests/unit/**/*.test.ts', 'tests/features/settings/settings-fields.panel.test.ts', 'tests/features/ping/*.test.ts'],
        setupFiles: ['tests/setup/server-log.ts'],
        environment: 'node',
        pool: 'forks',
        maxWorkers: 1,
        testTimeout: 30_000,
        hookTimeout: 60_000,
      })} }\n`,
    )
    const report = join(work, 'vitest.json')
    const tests = await run(
      join(copy, 'node_modules', '.bin', 'vitest'),
      ['run', '--config', config, '--reporter=json', `--outputFile=${report}`],
      480_000,
    )
    console.log(`feature recipe: the feature tests in the copy took ${tests.seconds} s`)
    const results = JSON.parse(existsSync(report) ? readFileSync(report, 'utf8') : '{"testResults":[]}') as {
      numFailedTests: number
      testResults: Array<{
        name: string
        status: string
        assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }>
      }>
    }
    const failed = results.testResults.flatMap((file) =>
      file.assertionResults
        .filter((a) => a.status !== 'passed')
        .map((a) => `${relative(copy, file.name)}: ${a.fullName}: ${a.failureMessages.join(' ').slice(0, 400)}`),
    )
    expect({ code: tests.code, failed, output: tests.code === 0 ? '' : tests.output.slice(-2000) }).toEqual({
      code: 0,
      failed: [],
      output: '',
    })
    const passed = (path: string) =>
      results.testResults.find((file) => relative(copy, file.name) === path)?.assertionResults.map((a) => a.status)
    // GET /api/auth/ping answered on the copy's server (and refused and went away as it should), and gatehouse ping ran.
    expect(passed('tests/features/ping/ping.api.test.ts')).toEqual(['passed', 'passed', 'passed', 'passed'])
    for (const path of [
      'tests/unit/architecture-doc.test.ts',
      'tests/unit/feature-declarations.test.ts',
      'tests/features/settings/settings-fields.panel.test.ts',
    ])
      expect(passed(path)?.length, path).toBeGreaterThan(3)

    // One folder plus one line per tree: what else differs from the repository is the two list
    // lines, README's row, the page's feature sentence and what the generator wrote.
    const original = new Set(files)
    const changed = filesOf(copy).filter(
      (path) => !original.has(path) || readFileSync(join(root, path), 'utf8') !== readFileSync(join(copy, path), 'utf8'),
    )
    const folders = ['server/features/ping/', 'renderer/src/features/ping/', 'tests/features/ping/']
    expect(changed.filter((path) => !folders.some((folder) => path.startsWith(folder))).sort()).toEqual([
      'README.md',
      'docs/ARCHITECTURE.md',
      'renderer/src/features/index.ts',
      // Generated: ping's command (commands.ts) and its config section.
      'server/features/commands.ts',
      'server/features/config-sections.ts',
      'server/features/index.ts',
    ])
    for (const path of ['server/features/index.ts', 'renderer/src/features/index.ts']) {
      const before = readFileSync(join(root, path), 'utf8').split('\n')
      const after = read(path).split('\n')
      expect({ path, added: after.filter((line) => !before.includes(line)) }).toEqual({
        path,
        added: path.startsWith('server')
          ? ["import { pingFeature } from './ping/index.js'", '  pingFeature,']
          : ["import { pingPanel } from './ping'", '  pingPanel,'],
      })
      expect(after.length - before.length).toBe(2)
    }
  })
})
