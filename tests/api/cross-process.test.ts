import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer, testEngine } from '../helpers/server.js'
import { administrator } from '../helpers/members.js'

/**
 * Issue 11: a change made by another process (the CLI, SQL on the database file) is seen by the
 * very next request, not after the session cache's next periodic look. On the PostgreSQL run the
 * other process is another connection to the server's database, writing the same SQL.
 */
let server: TestServer
/** Another process's connection: one statement with its parameters ($1...), run to completion. */
let other: { run(statement: string, ...params: string[]): Promise<void>; close(): Promise<void> }

beforeAll(async () => {
  server = await startTestServer()
  if (testEngine === 'postgres') {
    // The test PostgreSQL has no password, so the location the server reports is its URL.
    const client = new pg.Client({ connectionString: server.gatehouse.database.location })
    await client.connect()
    other = {
      async run(statement, ...params) {
        await client.query(statement, params)
      },
      close: () => client.end(),
    }
  } else {
    const file = new Database(join(server.dataDir, 'gatehouse.db'))
    file.pragma('busy_timeout = 5000')
    other = {
      async run(statement, ...params) {
        file.prepare(statement.replace(/\$\d+/g, '?')).run(...params)
      },
      async close() {
        file.close()
      },
    }
  }
})
afterAll(async () => {
  await other.close()
  await server.close()
})

describe('changes made by another process', () => {
  it('a demotion by SQL on the file refuses list-users on the very next request', async () => {
    const admin = await administrator(server)
    // Warm the session cache: the same session answers twice from it.
    expect((await admin.client.admin.listUsers({ query: { limit: 1 } })).error).toBeNull()
    expect((await admin.client.admin.listUsers({ query: { limit: 1 } })).error).toBeNull()
    await other.run(`update "user" set "role" = 'user' where "id" = $1`, admin.id)
    const refused = await admin.client.admin.listUsers({ query: { limit: 1 } })
    expect(refused.error).toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS',
      message: 'You are not allowed to list users',
    })
  })

  it('a session deleted by another process is gone on the very next get-session', async () => {
    const admin = await administrator(server)
    const before = await admin.client.getSession()
    expect(before.data?.user.id).toBe(admin.id)
    expect((await admin.client.getSession()).data?.user.id).toBe(admin.id)
    await other.run('delete from "session" where "userId" = $1', admin.id)
    const after = await admin.client.getSession()
    expect(after.error).toBeNull()
    expect(after.data).toBeNull()
  })

  it('a ban written by another process refuses the next admin call and the role change is seen too', async () => {
    const admin = await administrator(server)
    expect((await admin.client.admin.listUsers({ query: { limit: 1 } })).error).toBeNull()
    await other.run(`update "user" set "role" = 'user,admin' where "id" = $1`, admin.id)
    expect((await admin.client.admin.listUsers({ query: { limit: 1 } })).error).toBeNull()
    await other.run('delete from "user" where "id" = $1', admin.id)
    const gone = await admin.client.admin.listUsers({ query: { limit: 1 } })
    expect(gone.error).toMatchObject({ status: 401, code: 'UNAUTHORIZED' })
  })
})
