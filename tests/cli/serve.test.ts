import { packageVersion } from '../../server/version.js'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { HttpClient, uniqueEmail } from '../helpers/http.js'
import { runCli, startServerProcess } from '../helpers/process.js'

const dirs: string[] = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('gatehouse serve', () => {
  it('starts on the embedded default, persists a 0600 secret, and stops cleanly on SIGTERM', async () => {
    const dataDir = join(tempDir(), 'fresh')
    const server = await startServerProcess(['--port', '0', '--data-dir', dataDir], { GATEHOUSE_SECRET: '' })
    expect(statSync(dataDir).mode & 0o777).toBe(0o700)
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/auth$/)
    const ok = await fetch(`${server.url}/ok`)
    expect(await ok.json()).toEqual({ ok: true, version: packageVersion() })
    expect(statSync(join(dataDir, 'secret')).mode & 0o777).toBe(0o600)
    // The database holds password hashes and tokens: owner only, WAL files included.
    for (const file of ['gatehouse.db', 'gatehouse.db-wal', 'gatehouse.db-shm'])
      expect(statSync(join(dataDir, file)).mode & 0o777, file).toBe(0o600)
    server.child.kill('SIGTERM')
    expect(await server.exited).toEqual({ code: 0, signal: null })
    expect(server.output()).toContain('SIGTERM received, shutting down')
  })

  it('warns when the well-known default secret is in use', async () => {
    const server = await startServerProcess(['--port', '0', '--data-dir', tempDir()], { GATEHOUSE_SECRET: 'better-auth-secret-123456789' })
    server.child.kill('SIGINT')
    await server.exited
    expect(server.output()).toContain('warning: the default secret is in use')
  })

  it('takes every option from GATEHOUSE_* variables too', async () => {
    const dataDir = tempDir()
    const server = await startServerProcess([], {
      GATEHOUSE_PORT: '0',
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_TRUSTED_ORIGINS: 'https://app.example.com',
      GATEHOUSE_RATE_LIMIT: 'off',
    })
    const client = new HttpClient(server.url, { origin: 'https://app.example.com' })
    const res = await client.post('/sign-up/email', { name: 'E', email: uniqueEmail(), password: 'password123' })
    expect(res.status).toBe(200)
    for (let i = 0; i < 5; i++)
      expect((await client.post('/sign-in/email', { email: uniqueEmail(), password: 'x'.repeat(8) })).status).toBe(401)
    server.child.kill('SIGTERM')
    await server.exited
  })

  it('refuses bad flags and config with one line naming the field and exit code 2, leaving files untouched', async () => {
    const dataDir = tempDir()
    const port = await runCli(['serve', '--port', 'eighty', '--data-dir', dataDir])
    expect(port.code).toBe(2)
    expect(port.stderr.trim()).toBe('gatehouse: port: "eighty" is not a port number (0-65535)')

    const origins = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--trusted-origins', 'https://a.com,,https://b.com'])
    expect(origins.code).toBe(2)
    expect(origins.stderr.trim()).toBe('gatehouse: configuration: trustedOrigins.1: a trusted origin must not be empty')

    const configFile = join(dataDir, 'extra.json')
    writeFileSync(configFile, '{"session":{"expiresIn":-5}}')
    const bad = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--config', configFile])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/^gatehouse: configuration: session\.expiresIn: .+\n$/)
    expect(readFileSync(configFile, 'utf8')).toBe('{"session":{"expiresIn":-5}}')

    const stored = join(dataDir, 'config.json')
    writeFileSync(stored, '{ not json')
    const broken = await runCli(['serve', '--port', '0', '--data-dir', dataDir])
    expect(broken.code).toBe(2)
    expect(broken.stderr).toContain(`config file ${stored}: not valid JSON`)
    expect(readFileSync(stored, 'utf8')).toBe('{ not json')

    const rate = await runCli(['serve', '--rate-limit', 'maybe'])
    expect(rate.code).toBe(2)
    expect(rate.stderr.trim()).toBe('gatehouse: rate-limit: "maybe" must be on or off')
  })

  it('keeps every acknowledged sign-up across a SIGKILL', async () => {
    const dataDir = tempDir()
    const server = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'])
    const acknowledged: string[] = []
    const attempts = Array.from({ length: 24 }, async (_, i) => {
      const email = uniqueEmail(`crash${i}`)
      try {
        const res = await new HttpClient(server.url).post('/sign-up/email', { name: `C${i}`, email, password: 'password123' })
        if (res.status === 200) acknowledged.push(email)
      } catch {
        // The process was killed mid-request: not acknowledged, nothing to check.
      }
    })
    // Kill as soon as the first half has been acknowledged, while the rest are in flight.
    while (acknowledged.length < 12) await new Promise((r) => setTimeout(r, 5))
    server.child.kill('SIGKILL')
    await Promise.allSettled(attempts)
    expect((await server.exited).signal).toBe('SIGKILL')

    const db = new Database(join(dataDir, 'gatehouse.db'), { readonly: false })
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
    db.close()
    const restarted = await startServerProcess(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off'])
    for (const email of acknowledged) {
      const res = await new HttpClient(restarted.url).post('/sign-in/email', { email, password: 'password123' })
      expect(res.status, email).toBe(200)
    }
    restarted.child.kill('SIGTERM')
    await restarted.exited
  })
})
