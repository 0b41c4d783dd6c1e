import Sqlite12 from 'better-sqlite3'
import Sqlite13 from 'better-sqlite3-napi'

/**
 * The SQLite driver the server opens every database with (its own, a backup's copy, a better-auth
 * database being imported): better-sqlite3 13 (`better-sqlite3-napi`, an N-API 10 addon with
 * prebuilt binaries in the package) wherever N-API 10 exists — Node 22.14+ and 24, the supported
 * runtimes — and better-sqlite3 12 (compiled for the Node that installed it) on Node 20.
 *
 * Why two: better-sqlite3 12 aborts Node 24 now and then when a statement is garbage-collected
 * ("Assertion failed: (env) != nullptr", WiseLibs/better-sqlite3#1515, closed upstream without a
 * fix); 13 does not, but needs N-API 10 (its engines: node >= 22) and crashes Node 20 on open.
 * Both packages only load their addon when the first database is opened, so importing both costs
 * nothing; only the chosen one is ever loaded. The two share one API (the @types of 12 describe both).
 */
const napi13 = Number(process.versions.napi ?? 0) >= 10

export const SqliteDatabase: typeof Sqlite12 = napi13 ? (Sqlite13 as typeof Sqlite12) : Sqlite12
