import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { HttpClient } from '../helpers/http.js'
import { runCli, startServerProcess } from '../helpers/process.js'

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'release-0.5.0')
const root = join(import.meta.dirname, '..', '..')
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** The previous release's data directory (tests/fixtures/release-0.5.0/README.md), in a fresh folder. */
function previousReleaseDataDir(): string {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gatehouse-upgrade-')), 'data')
  dirs.push(join(dataDir, '..'))
  mkdirSync(dataDir, { mode: 0o700 })
  writeFileSync(join(dataDir, 'gatehouse.db'), gunzipSync(readFileSync(join(FIXTURE, 'gatehouse.db.gz'))), { mode: 0o600 })
  copyFileSync(join(FIXTURE, 'config.json'), join(dataDir, 'config.json'))
  copyFileSync(join(FIXTURE, 'secret'), join(dataDir, 'secret'))
  return dataDir
}

const SECRET = readFileSync(join(FIXTURE, 'secret'), 'utf8').trim()

async function forwardAuth(client: HttpClient, host: string): Promise<number> {
  return (await client.get('/forward-auth/auth-request', { 'x-original-url': `https://${host}/` })).status
}

describe('upgrading the previous release’s data directory', () => {
  it('migrates a forward-auth rule with bare teams (accepted by 0.4.0) to deny instead of refusing to start: config.json rewritten, the original kept as config.json.<version>.bak, the change logged and audited', async () => {
    const dataDir = previousReleaseDataDir()
    // The previous release's alice never verified her address; identity.requireVerifiedEmail (0.6.0)
    // would refuse her at every face (401) before any rule: verified here, so the rules decide.
    const fixture = new Database(join(dataDir, 'gatehouse.db'))
    fixture.prepare('UPDATE user SET emailVerified = 1 WHERE email = ?').run('alice@example.lan')
    fixture.close()
    const original = readFileSync(join(dataDir, 'config.json'), 'utf8')
    const server = await startServerProcess(['--port', '0', '--data-dir', dataDir], { GATEHOUSE_SECRET: SECRET })
    try {
      const base = server.url
      expect(server.output()).toContain(
        `configuration migrated for 0.6.0 (CHANGELOG.md#0.5.0-forward-auth-teams): forwardAuth.rules[0] (wiki.example.lan): subject.teams ["ops"] names no organization; the rule now denies`,
      )
      expect(server.output()).toContain(`config.json rewritten (the previous file is ${join(dataDir, `config.json.${version}.bak`)})`)
      // The previous release's user still signs in (the data came through), and makes herself what the old
      // reading let through: a team "ops" in an organization of her own.
      const alice = new HttpClient(base)
      expect((await alice.post('/sign-in/email', { email: 'alice@example.lan', password: 'password-1234' })).status).toBe(200)
      const org = await alice.post<{ id: string }>('/organization/create', { name: 'Evil', slug: 'evil' })
      expect(org.status).toBe(200)
      const team = await alice.post<{ id: string }>('/organization/create-team', { name: 'ops', organizationId: org.body.id })
      expect(team.status).toBe(200)
      const me = await alice.get<{ user: { id: string } }>('/get-session')
      const joined = await alice.post('/organization/add-team-member', {
        teamId: team.body.id,
        userId: me.body.user.id,
        organizationId: org.body.id,
      })
      expect(joined.status).toBe(200)
      // The migrated rule denies her (it denies everyone); the qualified rule is unchanged (not acme's ops: 403);
      // the bypass rule still lets anyone through.
      expect(await forwardAuth(alice, 'wiki.example.lan')).toBe(403)
      expect(await forwardAuth(alice, 'grafana.example.lan')).toBe(403)
      expect(await forwardAuth(new HttpClient(base), 'grafana.example.lan')).toBe(401)
      expect(await forwardAuth(alice, 'public.example.lan')).toBe(200)
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
    expect(readFileSync(join(dataDir, `config.json.${version}.bak`), 'utf8')).toBe(original)
    const rewritten = JSON.parse(readFileSync(join(dataDir, 'config.json'), 'utf8'))
    expect(rewritten.forwardAuth.rules).toEqual([
      { domain: 'wiki.example.lan', policy: 'deny' },
      { domain: 'grafana.example.lan', policy: 'signed-in', subject: { teams: ['acme/ops'] } },
      { domain: 'public.example.lan', policy: 'bypass' },
    ])
    expect(rewritten.emailAndPassword).toEqual({ minPasswordLength: 10 })
    const db = new Database(join(dataDir, 'gatehouse.db'), { readonly: true })
    const events = db.prepare("select target, detail from auditEvent where type = 'config.migrated'").all() as Array<{
      target: string
      detail: string
    }>
    db.close()
    expect(events).toHaveLength(1)
    expect(events[0]?.target).toBe('file')
    expect(JSON.parse(events[0]?.detail ?? '{}')).toMatchObject({
      release: '0.6.0',
      note: 'CHANGELOG.md#0.5.0-forward-auth-teams',
      backup: join(dataDir, `config.json.${version}.bak`),
    })

    // A second start finds nothing left to migrate: no second backup, no second event.
    const again = await startServerProcess(['--port', '0', '--data-dir', dataDir], { GATEHOUSE_SECRET: SECRET })
    again.child.kill('SIGTERM')
    await again.exited
    expect(again.output()).not.toContain('configuration migrated')
    expect(readdirSync(dataDir).filter((n) => n.startsWith('config.json.') && n.endsWith('.bak'))).toEqual([`config.json.${version}.bak`])
    expect(existsSync(join(dataDir, 'config.json'))).toBe(true)
  }, 120_000)
})

/** The fixture as the release before migration 0018 left it: that migration's columns and journal row taken out. */
function dataDirBefore0018(): string {
  const dataDir = previousReleaseDataDir()
  const db = new Database(join(dataDir, 'gatehouse.db'))
  db.exec('ALTER TABLE samlRequest DROP COLUMN forceAuthn; ALTER TABLE samlRequest DROP COLUMN isPassive')
  db.prepare('DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)').run()
  db.close()
  return dataDir
}

const journal = JSON.parse(readFileSync(join(root, 'server', 'db', 'migrations', 'meta', '_journal.json'), 'utf8')) as {
  entries: Array<{ when: number }>
}
const KNOWN = journal.entries.length
/** The fixture without migration 0018: migrations 0000–0017 applied; this build applies the rest. */
const BEFORE_0018 = 18
const pending = KNOWN - BEFORE_0018

describe('rollback refused, and the pre-upgrade backup', () => {
  it('serve backs the database up before applying migrations; a database a newer release migrated is refused at start with one line naming both releases and that backup; the backup restores', async () => {
    const dataDir = dataDirBefore0018()
    const backups = join(dataDir, 'backups')
    const server = await startServerProcess(['--port', '0', '--data-dir', dataDir], { GATEHOUSE_SECRET: SECRET })
    server.child.kill('SIGTERM')
    await server.exited
    const made = readdirSync(backups).filter((n) => n.endsWith('-pre-upgrade.tar.gz'))
    expect(made).toHaveLength(1)
    const backup = join(backups, made[0] as string)
    expect(server.output()).toContain(
      `Pre-upgrade backup written: ${backup} (schema version ${BEFORE_0018}, ${pending} migration${pending === 1 ? '' : 's'} to apply); to go back: gatehouse restore ${backup} --data-dir ${dataDir}`,
    )
    // Nothing pending at the next start: no second backup.
    const second = await startServerProcess(['--port', '0', '--data-dir', dataDir], { GATEHOUSE_SECRET: SECRET })
    second.child.kill('SIGTERM')
    await second.exited
    expect(readdirSync(backups).filter((n) => n.endsWith('-pre-upgrade.tar.gz'))).toEqual(made)

    // A newer release migrates the database (a migration this build does not know, and its release recorded).
    const db = new Database(join(dataDir, 'gatehouse.db'))
    expect(db.prepare('SELECT version FROM __gatehouse_release').pluck().get()).toBe(version)
    db.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run(
      'a-future-migration',
      Math.max(...journal.entries.map((e) => e.when)) + 1000,
    )
    db.prepare('UPDATE __gatehouse_release SET version = ?').run('0.7.0')
    db.close()
    const before = readFileSync(join(dataDir, 'gatehouse.db'))
    const refused = await runCli(['serve', '--port', '0', '--data-dir', dataDir], { GATEHOUSE_SECRET: SECRET })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      `gatehouse: the database ${join(dataDir, 'gatehouse.db')} was migrated by Gatehouse 0.7.0 (schema version ${KNOWN + 1}); this is Gatehouse ${version} (schema version ${KNOWN}), which cannot run on it: start Gatehouse 0.7.0 again, or go back with gatehouse restore ${backup} --data-dir ${dataDir} (docs/UPGRADING.md)\n`,
    )
    expect(refused.stdout).not.toContain('listening')
    expect(readFileSync(join(dataDir, 'gatehouse.db')).equals(before)).toBe(true)
    // The way back the line names: the pre-upgrade backup restores, and the data (alice) starts.
    const restored = await runCli(['restore', backup, '--data-dir', dataDir])
    expect(restored.code).toBe(0)
    const back = await startServerProcess(['--port', '0', '--data-dir', dataDir], { GATEHOUSE_SECRET: SECRET })
    try {
      const alice = new HttpClient(back.url)
      expect((await alice.post('/sign-in/email', { email: 'alice@example.lan', password: 'password-1234' })).status).toBe(200)
    } finally {
      back.child.kill('SIGTERM')
      await back.exited
    }
  }, 120_000)

  it('keeps the last three pre-upgrade backups', async () => {
    const dataDir = dataDirBefore0018()
    const backups = join(dataDir, 'backups')
    mkdirSync(backups)
    const old = ['20260101-000000-000', '20260102-000000-000', '20260103-000000-000'].map((t) => `gatehouse-backup-${t}-pre-upgrade.tar.gz`)
    for (const name of old) writeFileSync(join(backups, name), 'old')
    const server = await startServerProcess(['--port', '0', '--data-dir', dataDir], { GATEHOUSE_SECRET: SECRET })
    server.child.kill('SIGTERM')
    await server.exited
    const kept = readdirSync(backups)
      .filter((n) => n.endsWith('-pre-upgrade.tar.gz'))
      .sort()
    expect(kept).toHaveLength(3)
    expect(kept.slice(0, 2)).toEqual(old.slice(1))
  }, 120_000)
})
