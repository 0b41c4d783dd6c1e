// better-sqlite3 13 installed under the alias `better-sqlite3-napi` (package.json): the same API as
// better-sqlite3 12, whose @types describe it (server/db/sqlite-driver.ts).
declare module 'better-sqlite3-napi' {
  import Database from 'better-sqlite3'
  export = Database
}
