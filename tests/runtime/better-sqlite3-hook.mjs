// Loaded with `node --import` (NODE_OPTIONS) when the tests run on another Node.js runtime
// (tests/helpers/runtimes.ts): better-sqlite3 12 is a native addon built for one ABI, the
// checkout's Node's. There the server itself opens SQLite with better-sqlite3 13
// (`better-sqlite3-napi`, N-API: server/db/sqlite-driver.ts); the tests' own uses of the package —
// `import 'better-sqlite3'`, `require('better-sqlite3')`, or the absolute path Vitest resolves it
// to — are sent to that same package, named by GATEHOUSE_BETTER_SQLITE3. Everything else resolves
// as usual.
import * as nodeModule from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const overlay = process.env.GATEHOUSE_BETTER_SQLITE3
// module.registerHooks exists from Node 22.15 and 23.5 on (never set for an older Node).
if (overlay && typeof nodeModule.registerHooks === 'function') {
  const original = `${pathToFileURL(join(import.meta.dirname, '..', '..', 'node_modules', 'better-sqlite3')).href}/`
  const replacement = `${pathToFileURL(overlay).href}/`
  const entry = `${replacement}lib/index.js`
  nodeModule.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (specifier === 'better-sqlite3') return { url: entry, format: 'commonjs', shortCircuit: true }
      const resolved = nextResolve(specifier, context)
      if (resolved.url.startsWith(original)) return { ...resolved, url: replacement + resolved.url.slice(original.length) }
      return resolved
    },
  })
}
