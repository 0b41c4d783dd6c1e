/**
 * One person, one answer (issue 51 §2): each rule below is written once in server/, in the file its
 * row names, and every other place calls it. A second copy anywhere else in server/ fails here, so
 * two faces cannot drift (an earlier copy of the ban comparison in the API-key path ignored the
 * ban's expiry; the overview counted lapsed bans; SAML and OIDC spelled the login name themselves).
 *
 * A row: the rule, the one file allowed to hold it (relative to server/), and its patterns, each
 * with a line it catches (a copy as someone would write it). The scanner reads every .ts/.tsx file
 * line by line; the planted-copy test runs the same scanner over a temporary tree.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, sep } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

interface Rule {
  rule: string
  /** The one file that may hold the rule, relative to server/. */
  file: string
  /** Each pattern with a copy of the rule it catches. */
  patterns: Array<[RegExp, string]>
}

const RULES: Rule[] = [
  {
    rule: 'banned now (bannedNow / bannedNowWhere)',
    file: 'core/bans.ts',
    patterns: [
      // The expiry compared with a time.
      [/banExpires\??\.(getTime|valueOf)\(\)\s*[<>]/, 'if (row.banExpires.getTime() > Date.now()) return refuse()'],
      [/banExpires[^\n]*[<>]=?\s*(now|ctx\.clock|Date\.now)/, 'const inForce = !row.banExpires || row.banExpires > now'],
      // A stored user's banned flag tested for a decision (the admin feature's input and patch objects, which set a ban, are not reads).
      [/(?<!\b(data|patch|input))\.banned\s*(===|!==)\s*true/, 'if (user.banned === true) return null'],
      [/(?<!\b(data|patch|input))\.banned\s*&&/, 'const refused = user.banned && !lapsed'],
      // The same in SQL: a query on the ban columns.
      [
        /\b(eq|ne|gt|gte|lt|lte|isNull|isNotNull)\(\s*user\.ban(ned|Expires)\b/,
        'bannedUsers: await one(db.select({ n: count() }).from(user).where(eq(user.banned, true))),',
      ],
    ],
  },
  {
    rule: 'the login name (loginNameOf: the username in lower case, else the email)',
    file: 'features/username/rules.ts',
    patterns: [
      [/\busername\s*(\?\?|\|\|)\s*[\w.]*\bemail\b/, 'preferred_username: row.username ?? row.email,'],
      [/\.username\s*\?\s*[^:\n]+:\s*[\w.]*\bemail\b/, 'const uid = user.username ? user.username.toLowerCase() : user.email'],
    ],
  },
  {
    rule: "a team's group name (teamGroupName: organization-slug/team-slug)",
    file: 'features/groups/names.ts',
    patterns: [
      [
        /\$\{[^}]*(slug|organization)[^}]*\}\/\$\{[^}]*team[^}]*\}/i,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the copy is source text holding a template
        'organizations.map((slug) => ({ where: `${at}.teams`, name: `${slug}/${team}` })),',
      ],
      [/(slug|organization)\w*\)?\s*\+\s*['"`]\/['"`]\s*\+/i, "const group = org.slug + '/' + teamSlug(team.name)"],
    ],
  },
  {
    rule: "where a request comes from (requestOriginOf: Origin, else the Referer's origin)",
    file: 'config/trusted-origins.ts',
    patterns: [
      [
        /\borigin\b['"]?\]?\)?\s*(\?\?|\|\|)[^\n]*\breferer\b/i,
        "const origin = request.headers.get('origin') ?? request.headers.get('referer')",
      ],
    ],
  },
  {
    rule: "a URL's password masked (maskUrlPassword / urlPassword)",
    file: 'config/url-password.ts',
    patterns: [
      [/\.password\s*=\s*['"`]/, "if (url.password) url.password = '****'"],
      [/:\*{3,}@/, "return url.replace(/\\/\\/([^:/@]*):[^@]*@/, '//$1:***@')"],
    ],
  },
  {
    rule: "a hosted page's address (hostedPageURL / hostedPageIfOn: {baseURL}/ui/<page>, its query encoded one way)",
    file: 'http/hosted-page-url.ts',
    patterns: [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the copy is source text holding a template
      [/\$\{[\w.]*baseURL\}\/ui\//, 'return redirect(res, `${ctx.baseURL}/ui/sign-in?returnTo=${encodeURIComponent(here)}`)'],
    ],
  },
]

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* sources(path)
    else if (/\.tsx?$/.test(name)) yield path
  }
}

const relativePath = (root: string, file: string) => relative(root, file).split(sep).join('/')

/** The lines of `file` (under root) that hold one of the rule's patterns, as `path:line: text`. */
function holders(root: string, file: string, patterns: readonly RegExp[]): string[] {
  const rel = relativePath(root, file)
  const found: string[] = []
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (patterns.some((re) => re.test(line))) found.push(`${rel}:${i + 1}: ${line.trim()}`)
    })
  return found
}

/** Every copy of the rule under root outside its one file. */
function copiesOf(root: string, rule: Rule): string[] {
  const patterns = rule.patterns.map(([re]) => re)
  return [...sources(root)].filter((file) => relativePath(root, file) !== rule.file).flatMap((file) => holders(root, file, patterns))
}

const serverDir = join(import.meta.dirname, '../../server')

describe('one person, one answer: each rule is written once in server/', () => {
  for (const rule of RULES) {
    it(`${rule.rule}: only in ${rule.file}`, () => {
      expect(copiesOf(serverDir, rule)).toEqual([])
      // The row's patterns still find the rule where it lives (a pattern that matches nothing guards nothing).
      expect(
        holders(
          serverDir,
          join(serverDir, rule.file),
          rule.patterns.map(([re]) => re),
        ).length,
      ).toBeGreaterThan(0)
    })
  }
})

describe('the scanner', () => {
  const tree = mkdtempSync(join(tmpdir(), 'gatehouse-one-copy-'))
  afterAll(() => rmSync(tree, { recursive: true, force: true }))

  const plant = (root: string, rel: string, text: string) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true })
    writeFileSync(join(root, rel), text)
  }

  it('plant a copy of each pattern: it fails (and the same line in the rule file is allowed)', () => {
    RULES.forEach((rule, r) => {
      rule.patterns.forEach(([re, copy], p) => {
        const root = join(tree, `${r}-${p}`)
        plant(root, rule.file, `export const one = 1\n${copy}\n`)
        plant(root, 'features/elsewhere/planted.ts', `export const two = 2\n  ${copy}\n`)
        plant(root, 'features/elsewhere/clean.tsx', 'export const three = 3\n')
        // Each pattern on its own, so every one of them is shown to catch its copy.
        expect([rule.rule, String(re), copiesOf(root, { ...rule, patterns: [[re, copy]] })]).toEqual([
          rule.rule,
          String(re),
          [`features/elsewhere/planted.ts:2: ${copy.trim()}`],
        ])
      })
    })
  })
})

describe('hosted page addresses', () => {
  it('every page a server file names to hostedPageURL / hostedPageIfOn is one a feature declares (pages.ts)', async () => {
    const { HOSTED_PAGES } = await import('../../server/features/hosted-page-list.js')
    const named = [...sources(serverDir)].flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/hostedPage(?:URL|IfOn)\([^,]+,\s*'([^']+)'/g)].map((m) => ({
        file: relativePath(serverDir, file),
        page: m[1] as string,
      })),
    )
    expect(named.length).toBeGreaterThan(15)
    expect(named.filter(({ page }) => !(HOSTED_PAGES as readonly string[]).includes(page))).toEqual([])
  })
})
