#!/usr/bin/env node
/**
 * Builds the headless server once: server/main.ts → dist/server/main.mjs (one ES module, npm
 * packages left external), plus dist/server/sources.json, the fingerprint (path, size, mtime) of
 * every source it was built from. `npm install` runs this (the `prepare` script), and so does
 * `npm run build`; bin/gatehouse.js then starts the built file without any compiler, and rebuilds
 * first only when a source differs from the fingerprint (so an edited checkout, or a test run,
 * never runs an old bundle).
 *
 *   node bin/build-server.js            build
 *   node bin/build-server.js --if-stale build only when the sources changed
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// Two levels below the root, like the sources, so paths resolved from import.meta.url still hold.
export const outDir = join(root, 'dist', 'server')
export const outFile = join(outDir, 'main.mjs')
const stampFile = join(outDir, 'sources.json')

/** "path size mtime" of every TypeScript source under server/, sorted; cheap (stat only). */
export function sourceFingerprint() {
  const lines = []
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.ts')) {
        const stat = statSync(path)
        lines.push(`${relative(root, path)} ${stat.size} ${stat.mtimeMs}`)
      }
    }
  }
  walk(join(root, 'server'))
  return lines.sort().join('\n')
}

/** True when dist/server/main.mjs exists and was built from exactly the sources on disk. */
export function isFresh() {
  if (!existsSync(join(root, 'server', 'main.ts'))) return existsSync(outFile) // an install without sources
  try {
    return existsSync(outFile) && readFileSync(stampFile, 'utf8') === sourceFingerprint()
  } catch {
    return false
  }
}

/**
 * One ES module per entry plus shared chunks, npm packages bundled in (fewer files to resolve and
 * read at start), except better-sqlite3 and better-sqlite3-napi (native; server/db/sqlite-driver.ts). Modules the server imports lazily (nodemailer at
 * the first delivery, the zxcvbn dictionaries when common passwords are refused) become chunks
 * loaded only then.
 */
/**
 * zod re-exports all of its ~40 message locales as a namespace (`z.locales`), which a bundler cannot
 * drop; the server uses only English (set by zod itself). Inside zod, `../locales/index.js` becomes
 * English alone: about 0.3 MB less source for V8 to hold at every start.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]zod[\\/]/.test(args.importer)) return undefined
      return { path: join(dirname(args.importer), '..', 'locales', 'index.js'), namespace: 'zod-locales' }
    })
    build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: "export { default as en } from './en.js'",
      resolveDir: dirname(args.path),
      loader: 'js',
    }))
  },
}

/**
 * A lazily imported CommonJS package keeps its named exports. With code splitting, esbuild turns
 * the target of an `import()` into a chunk whose only export is `default` (module.exports), and
 * does not unwrap it at the import site (evanw/esbuild#3245): `const { ZxcvbnFactory } = await
 * import('@zxcvbn-ts/core')` — a CommonJS package on Node — got undefined in the bundle while Node,
 * running the sources, gives the named exports (it reads them from module.exports). Here such an
 * `import()` goes through a small ES module that imports the package and re-exports, by name, every
 * property of its module.exports (read at build time by loading it, as Node would), plus `default`.
 */
const lazyCommonJs = {
  name: 'lazy-commonjs-named-exports',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.kind !== 'dynamic-import' || args.pluginData === 'lazy-commonjs') return undefined
      const resolved = await build.resolve(args.path, {
        kind: 'import-statement',
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: 'lazy-commonjs',
      })
      if (resolved.errors.length > 0 || resolved.external || !isCommonJs(resolved.path)) return undefined
      return { path: resolved.path, namespace: 'lazy-commonjs' }
    })
    build.onLoad({ filter: /.*/, namespace: 'lazy-commonjs' }, (args) => {
      const exported = createRequire(args.path)(args.path)
      const names = Object.keys(exported).filter((name) => name !== 'default' && name !== '__esModule')
      const lines = [`import * as cjs from ${JSON.stringify(args.path)}`, 'export default cjs.default']
      for (const [i, name] of names.entries())
        lines.push(`const e${i} = cjs[${JSON.stringify(name)}]`, `export { e${i} as ${JSON.stringify(name)} }`)
      return { contents: lines.join('\n'), resolveDir: dirname(args.path), loader: 'js' }
    })
  },
}

/** How Node loads the file: .cjs, or .js under a package.json without "type": "module". */
function isCommonJs(file) {
  if (file.endsWith('.cjs')) return true
  if (!file.endsWith('.js')) return false
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')).type !== 'module'
  }
  return true
}

export async function buildServer({ prune = false } = {}) {
  // The feature aggregations follow server/features/index.ts (a folder plus one line there is a new
  // capability): written before the fingerprint, so the bundle is built from what they now say.
  if (existsSync(join(root, 'server', 'features', 'index.ts'))) {
    const { generateFeatureAggregations } = await import('./gen-features.js')
    for (const path of await generateFeatureAggregations()) console.log(`wrote ${path}`)
  }
  const before = sourceFingerprint()
  const esbuild = await import('esbuild')
  try {
    const result = await esbuild.build({
      entryPoints: { main: join(root, 'server', 'main.ts') },
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outdir: outDir,
      outExtension: { '.js': '.mjs' },
      chunkNames: 'chunk-[hash]',
      // oidc-provider keys its models and TTLs by class name (`this.name`), which bundling renames
      // (IdToken → IdToken2): it is loaded from node_modules as published.
      external: ['better-sqlite3', 'better-sqlite3-napi', 'vite', 'oidc-provider', '@node-rs/argon2'],
      plugins: [zodEnglishOnly, lazyCommonJs],
      // Whitespace and syntax only (names stay, so stack traces stay readable): V8 keeps the source
      // text of every loaded module in memory for lazy compilation, so a smaller text is less RSS.
      minifyWhitespace: true,
      minifySyntax: true,
      // Bundled CommonJS packages call require(); give them Node's.
      banner: {
        js: "import { createRequire as __gatehouseRequire } from 'node:module'; const require = __gatehouseRequire(import.meta.url);",
      },
      write: false,
      logLevel: 'silent',
    })
    mkdirSync(outDir, { recursive: true })
    // Chunks first, the entry last, each written aside and renamed: processes starting at the same
    // time never read half a file. A server already running may still load a chunk of its own build
    // later (nodemailer at its first mail), so the rebuild at start never deletes chunks; an explicit
    // build (npm run build:server, npm install) removes those of other builds older than a day.
    const outputs = [...result.outputFiles].sort((a, b) => (a.path === outFile ? 1 : 0) - (b.path === outFile ? 1 : 0))
    for (const file of outputs) {
      const tmp = `${file.path}.${process.pid}.tmp`
      writeFileSync(tmp, file.contents)
      renameSync(tmp, file.path)
    }
    const current = new Set(outputs.map((f) => basename(f.path)))
    for (const name of prune ? readdirSync(outDir) : []) {
      const path = join(outDir, name)
      if (name.startsWith('chunk-') && !current.has(name) && Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { force: true })
    }
    const stampTmp = `${stampFile}.${process.pid}.tmp`
    writeFileSync(stampTmp, before)
    renameSync(stampTmp, stampFile)
  } finally {
    // esbuild's service process must not outlive the build (gatehouse serve leaves no helper).
    await esbuild.stop()
  }
  return outFile
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--if-stale') && isFresh()) process.exit(0)
  const started = Date.now()
  await buildServer({ prune: true })
  console.log(`gatehouse: built ${relative(root, outFile)} in ${Date.now() - started} ms`)
}
