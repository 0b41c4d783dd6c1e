import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresServer, postgresUnavailable, startPostgres, warnSkipped } from '../helpers/engines.js'
import { HttpClient } from '../helpers/http.js'
import { type RunningServer, runCli, startServerProcess } from '../helpers/process.js'

/**
 * docs/IMPORT.md's recipes (issue 29), run exactly as the document writes them (each block marked
 * `<!-- recipe: name -->` is read from the file) on the sample exports of tests/fixtures/import/,
 * then imported through the built bundle into a running server, where every user with a password
 * signs in with it.
 */

const ROOT = join(import.meta.dirname, '..', '..')
const FIXTURES = join(ROOT, 'tests', 'fixtures', 'import')
const PASSWORD = 'Fixture password 1'

function recipes(): Map<string, { lang: string; code: string }> {
  const doc = readFileSync(join(ROOT, 'docs', 'IMPORT.md'), 'utf8')
  const out = new Map<string, { lang: string; code: string }>()
  for (const m of doc.matchAll(/<!-- recipe: (\w+) -->\n```(\w+)\n([\s\S]*?)```/g)) {
    out.set(m[1] as string, { lang: m[2] as string, code: m[3] as string })
  }
  return out
}

const missingTool = (tool: string) =>
  spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0 ? undefined : `${tool} is not installed`
const noTools = missingTool('jq') ?? missingTool('yq') ?? missingTool('python3')
warnSkipped('tests/cli/import-recipes.test.ts (the jq / yq / python3 recipes of docs/IMPORT.md)', noTools)
const noPostgres = postgresUnavailable()
warnSkipped('tests/cli/import-recipes.test.ts: the Supabase recipe (needs PostgreSQL)', noPostgres)

/** Who each sample export holds: email → has a password. */
const EXPECTED: Record<string, Record<string, boolean>> = {
  auth0: { 'ada.auth0@example.com': true, 'grace.auth0@example.com': true },
  clerk: { 'linus.clerk@example.com': true, 'margaret.clerk@example.com': true, 'social.clerk@example.com': false },
  keycloak: { 'alan.keycloak@example.com': true, 'katherine.keycloak@example.com': true, 'grace.keycloak@example.com': true },
  authelia: { 'john.authelia@example.com': true, 'harry.authelia@example.com': true },
  pocketbase: { 'edsger.pocketbase@example.com': true, 'barbara.pocketbase@example.com': true, 'root.pocketbase@example.com': true },
  supabase: { 'hedy.supabase@example.com': true, 'radia.supabase@example.com': true, 'github.supabase@example.com': false },
}

describe('docs/IMPORT.md recipes on sample exports', () => {
  const work = mkdtempSync(join(tmpdir(), 'gatehouse-recipes-'))
  const dataDir = join(work, 'data')
  let server: RunningServer
  let client: HttpClient
  let postgres: PostgresServer | undefined
  beforeAll(async () => {
    cpSync(FIXTURES, work, { recursive: true })
    server = await startServerProcess(['--port', '0', '--rate-limit', 'off', '--data-dir', dataDir], { GATEHOUSE_SECRET: '' })
    client = new HttpClient(server.url, { origin: new URL(server.url).origin })
    if (!noPostgres) postgres = await startPostgres()
  }, 60_000)
  afterAll(async () => {
    server?.child.kill('SIGTERM')
    await server?.exited
    await postgres?.stop()
    rmSync(work, { recursive: true, force: true })
  })

  /** Turns the export into `<name>.users.json` by the document's recipe. */
  async function convert(name: string): Promise<string> {
    const recipe = recipes().get(name)
    if (!recipe) throw new Error(`docs/IMPORT.md has no recipe ${name}`)
    const out = join(work, `${name}.users.json`)
    if (name === 'supabase') {
      const url = await (postgres as PostgresServer).createDatabase()
      const pool = new pg.Pool({ connectionString: url, max: 1 })
      try {
        await pool.query(readFileSync(join(FIXTURES, 'supabase-auth-users.sql'), 'utf8'))
        const { rows } = await pool.query<unknown[]>({ text: recipe.code, rowMode: 'array' })
        writeFileSync(out, JSON.stringify(rows[0]?.[0]))
      } finally {
        await pool.end()
      }
    } else if (name === 'pocketbase') {
      const db = new Database(':memory:')
      db.exec(readFileSync(join(FIXTURES, 'pocketbase-data.sql'), 'utf8'))
      writeFileSync(out, db.prepare(recipe.code).pluck().get() as string)
      db.close()
    } else {
      expect(recipe.lang).toBe('sh')
      execFileSync('sh', ['-c', recipe.code.replace(/> users\.json\s*$/, `> ${name}.users.json`)], { cwd: work })
    }
    return out
  }

  for (const name of Object.keys(EXPECTED)) {
    const skip = name === 'supabase' ? noPostgres : name === 'pocketbase' ? undefined : noTools
    it.skipIf(skip)(
      `${name}: the recipe's file imports and every user signs in with the old password`,
      async () => {
        const file = await convert(name)
        const expected = EXPECTED[name] as Record<string, boolean>
        const withPassword = Object.values(expected).filter(Boolean).length
        const run = await runCli(['import', 'users', '--file', file, '--data-dir', dataDir, '--json'])
        expect([run.code, JSON.parse(run.stdout)]).toEqual([
          0,
          { users: Object.keys(expected).length, accounts: withPassword, sessions: 0, organizations: 0, skipped: [], errors: [] },
        ])
        for (const [email, hasPassword] of Object.entries(expected)) {
          const res = await client.post('/sign-in/email', { email, password: PASSWORD })
          expect([email, res.status]).toEqual([email, hasPassword ? 200 : 401])
        }
      },
      60_000,
    )
  }

  it.skipIf(noTools)('Authelia: the admins group is the admin role, a disabled user is left out', async () => {
    const db = new Database(join(dataDir, 'gatehouse.db'), { readonly: true })
    try {
      expect(db.prepare(`select email, role, username from "user" where email like '%.authelia@example.com' order by email`).all()).toEqual(
        [
          { email: 'harry.authelia@example.com', role: 'user', username: 'harry' },
          { email: 'john.authelia@example.com', role: 'admin', username: 'john' },
        ],
      )
    } finally {
      db.close()
    }
  })
})
