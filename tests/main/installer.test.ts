import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * The Linux package as electron-builder makes it, up to the point where it must download a tool
 * (fpm, appimagetool): `npm run build`, then `electron-builder --linux --dir` with a stub Electron
 * distribution. The stub binary carries Electron's fuse wire, so the fuses electron-builder flips
 * can be read back.
 */
const root = resolve(import.meta.dirname, '../..')
const require = createRequire(import.meta.url)
const run = promisify(execFile)

const SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX'
/** Electron's fuse order (FuseV1Options); '1' enabled, '0' disabled: Electron's defaults. */
const FUSES = [
  'runAsNode',
  'cookieEncryption',
  'nodeOptions',
  'nodeCliInspect',
  'asarIntegrity',
  'onlyLoadAppFromAsar',
  'browserV8Snapshot',
  'fileProtocolPrivileges',
]
const DEFAULTS = '10110001'

let work: string
let unpacked: string
let extracted: string

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'gatehouse-installer-'))
  const dist = join(work, 'electron-dist')
  mkdirSync(dist)
  writeFileSync(
    join(dist, 'electron'),
    Buffer.concat([Buffer.from('stub '), Buffer.from(SENTINEL), Buffer.from([1, FUSES.length]), Buffer.from(DEFAULTS)]),
    { mode: 0o755 },
  )
  for (const file of ['chrome-sandbox', 'chrome_crashpad_handler', 'icudtl.dat', 'resources.pak', 'v8_context_snapshot.bin', 'LICENSE']) {
    writeFileSync(join(dist, file), '')
  }
  await run('npx', ['electron-vite', 'build'], { cwd: root })
  const out = join(work, 'out')
  await run(
    'npx',
    [
      'electron-builder',
      '--linux',
      '--dir',
      '--config',
      'electron-builder.yml',
      `-c.electronDist=${dist}`,
      '-c.electronVersion=45.4.1',
      `-c.directories.output=${out}`,
    ],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  )
  unpacked = join(out, 'linux-unpacked')
  extracted = join(work, 'app')
  require('@electron/asar').extractAll(join(unpacked, 'resources', 'app.asar'), extracted)
}, 400_000)

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('the Linux package', () => {
  it('flips the fuses: no RunAsNode, NODE_OPTIONS or --inspect; asar integrity on; the app only from app.asar', () => {
    const binary = readFileSync(join(unpacked, 'gatehouse'))
    const at = binary.indexOf(SENTINEL) + SENTINEL.length
    const wire = binary.subarray(at + 2, at + 2 + FUSES.length).toString()
    const state = Object.fromEntries(FUSES.map((name, i) => [name, wire[i] === '1']))
    expect(state).toEqual({
      runAsNode: false,
      cookieEncryption: true,
      nodeOptions: false,
      nodeCliInspect: false,
      asarIntegrity: true,
      onlyLoadAppFromAsar: true,
      browserV8Snapshot: false,
      fileProtocolPrivileges: true,
    })
  })

  it('holds only what the app runs: no esbuild, tsx, better-sqlite3 12 or prebuild-install; one SQLite prebuild', () => {
    const modules = readdirSync(join(extracted, 'node_modules'))
    for (const unwanted of ['esbuild', '@esbuild', 'tsx', 'better-sqlite3', 'prebuild-install', 'node-abi', 'node-addon-api']) {
      expect(modules, unwanted).not.toContain(unwanted)
    }
    expect(existsSync(join(extracted, 'out', 'main', 'index.js'))).toBe(true)
    expect(existsSync(join(extracted, 'out', 'renderer', 'index.html'))).toBe(true)
    const prebuilds = readdirSync(join(unpacked, 'resources', 'app.asar.unpacked', 'node_modules', 'better-sqlite3-napi', 'prebuilds'))
    expect(prebuilds).toEqual([`linux-${process.arch}.node`])
    expect(readdirSync(join(unpacked, 'resources', 'migrations')).some((f) => f.endsWith('.sql'))).toBe(true)
  })

  it('every package the main bundle and its chunks import resolves inside the package', () => {
    // index.js and the chunks it loads (each command's code is a chunk of its own: server/features/*/commands.ts).
    const outMain = join(extracted, 'out', 'main')
    const main = readdirSync(outMain, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.js'))
      .map((file) => readFileSync(join(outMain, file), 'utf8'))
      .join('\n')
    const specifiers = [...new Set([...main.matchAll(/from\s+"([^".][^"]*)"/g)].map((m) => m[1]!))].filter(
      // A package name (SQL text such as `from "${table}"` also follows `from`).
      (s) => !s.startsWith('node:') && s !== 'electron' && /^(@[\w.-]+\/)?[\w.-]+(\/[\w./-]+)?$/.test(s),
    )
    expect(specifiers).toEqual(expect.arrayContaining(['better-sqlite3-napi', 'h3', 'zod', 'drizzle-orm']))
    // The unpacked native module sits beside the asar; resolve it from there as Electron does.
    const inPackage = createRequire(join(extracted, 'out', 'main', 'index.js'))
    for (const specifier of specifiers) {
      const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!
      expect(existsSync(join(extracted, 'node_modules', name)), specifier).toBe(true)
      if (name !== 'better-sqlite3-napi') expect(() => inPackage.resolve(specifier), specifier).not.toThrow()
    }
  })

  it('the deb depends on electron-builder’s default list plus glibc 2.34 (listing depends replaces the defaults)', () => {
    const config = require('js-yaml').load(readFileSync(join(root, 'electron-builder.yml'), 'utf8')) as { deb: { depends: string[] } }
    const FpmTarget = require('app-builder-lib/out/targets/FpmTarget.js').default
    const defaults = FpmTarget.prototype.getDefaultDepends.call(null, 'deb') as string[]
    expect(defaults.length).toBeGreaterThan(5)
    expect(config.deb.depends).toEqual([...defaults, 'libc6 (>= 2.34)'])
  })
})
