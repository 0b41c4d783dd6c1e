import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import '../../server/config-schema.js' // the whole schema, handed down to the store
import { ConfigError, ConfigStore } from '../../server/config/store.js'

const dirs: string[] = []
const file = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-config-'))
  dirs.push(dir)
  return join(dir, 'config.json')
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('config store', () => {
  it('applies changes as a JSON Merge Patch: null removes a key and its default applies again', () => {
    const path = file()
    const store = new ConfigStore(path)
    store.update({
      rateLimit: { customRules: { '/a': { window: 5, max: 1 }, '/b': { window: 5, max: 2 } } },
      advanced: { useSecureCookies: true },
    })
    expect(Object.keys(store.get().rateLimit.customRules)).toEqual(['/a', '/b'])
    store.update({ rateLimit: { customRules: { '/a': null } }, advanced: { useSecureCookies: null } })
    expect(Object.keys(store.get().rateLimit.customRules)).toEqual(['/b'])
    expect(store.get().advanced.useSecureCookies).toBeUndefined()
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ rateLimit: { customRules: { '/b': { window: 5, max: 2 } } }, advanced: {} })
  })

  it('refuses an invalid change, naming the field, and keeps the file', () => {
    const path = file()
    const store = new ConfigStore(path)
    store.update({ session: { expiresIn: 100 } })
    const before = readFileSync(path, 'utf8')
    expect(() => store.update({ session: { expiresIn: -1 } })).toThrow(ConfigError)
    expect(() => store.update({ session: { expiresIn: -1 } })).toThrow(/session\.expiresIn/)
    expect(readFileSync(path, 'utf8')).toBe(before)
    expect(store.get().session.expiresIn).toBe(100)
  })

  it('keeps start-up overrides above the stored layer and reports changes to listeners', () => {
    const store = new ConfigStore(file(), { rateLimit: { enabled: false } })
    const seen: boolean[] = []
    store.onChange((c) => seen.push(c.rateLimit.enabled))
    store.update({ rateLimit: { enabled: true } })
    expect(store.get().rateLimit.enabled).toBe(false)
    expect(seen).toEqual([false])
  })
})

describe('config store shared with other instances', () => {
  const pending = () => {
    let release = (): void => {}
    const written = new Promise<void>((resolve) => {
      release = resolve
    })
    return { written, release }
  }

  it('applies a layer another instance wrote, and leaves an identical one alone', () => {
    const store = new ConfigStore(file())
    const seen: number[] = []
    store.onChange((c) => seen.push(c.session.expiresIn))
    expect(store.replaceStored({ session: { expiresIn: 500 } }, store.sharedMark())).toBe(true)
    expect(store.get().session.expiresIn).toBe(500)
    expect(store.replaceStored({ session: { expiresIn: 500 } }, store.sharedMark())).toBe(false)
    expect(seen).toEqual([500])
  })

  it('does not apply a layer read while its own write was in flight, even once that write has landed', async () => {
    const store = new ConfigStore(file())
    const write = pending()
    store.shareWith(() => write.written)
    store.update({ session: { expiresIn: 100 } })
    // A reload starts now: its read may still see the table without the write above.
    const mark = store.sharedMark()
    write.release()
    await store.flushed()
    expect(store.replaceStored({ session: { expiresIn: 50 } }, mark)).toBe(false)
    expect(store.get().session.expiresIn).toBe(100)
    // Marked after the write landed and before any other update: applies.
    expect(store.replaceStored({ session: { expiresIn: 200 } }, store.sharedMark())).toBe(true)
    expect(store.get().session.expiresIn).toBe(200)
  })

  it('does not apply a layer read before a later local update', async () => {
    const store = new ConfigStore(file())
    store.shareWith(async () => {})
    const mark = store.sharedMark()
    store.update({ session: { expiresIn: 100 } })
    await store.flushed()
    expect(store.replaceStored({ session: { expiresIn: 50 } }, mark)).toBe(false)
    expect(store.get().session.expiresIn).toBe(100)
  })
})
