/**
 * The proposal of docs/proposals/list-users-total.md on a real SQLite file: after any mix of
 * inserts, role and ban changes (through the columns' NULLs too) and deletes, the maintained
 * `userCount` equals a GROUP BY over the user table, and the index-answered counts equal today's
 * count(*) for each filter shape.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../server/db/index.js'

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-total-'))
const database = openDatabase(join(dir, 'gatehouse.db'))
const { sqlite } = database
afterAll(() => {
  database.close()
  rmSync(dir, { recursive: true, force: true })
})

const proposal = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'proposals', 'list-users-total.sqlite.sql'), 'utf8')
const insert = sqlite.prepare(
  'INSERT INTO user (id, name, email, emailVerified, createdAt, updatedAt, role, banned) VALUES (?, ?, ?, 0, 0, 0, ?, ?)',
)
const grouped = () =>
  sqlite
    .prepare("SELECT coalesce(role, '') AS role, coalesce(banned, 0) AS banned, count(*) AS n FROM user GROUP BY 1, 2 ORDER BY 1, 2")
    .all()
const maintained = () => sqlite.prepare('SELECT role, banned, n FROM userCount WHERE n > 0 ORDER BY 1, 2').all()

describe('maintained user counts (proposal)', () => {
  it('the migration counts the users already there', () => {
    for (let i = 0; i < 50; i++)
      insert.run(
        `u${i}`,
        `Name ${i}`,
        `U${i}@Example.com`,
        i % 10 === 0 ? 'admin' : i % 7 === 0 ? null : 'user',
        i % 5 === 0 ? 1 : i % 11 === 0 ? null : 0,
      )
    sqlite.exec(proposal)
    expect(maintained()).toEqual(grouped())
  })

  it('triggers keep it exact through inserts, role and ban changes (NULLs included) and deletes', () => {
    for (let i = 50; i < 80; i++) insert.run(`u${i}`, `Name ${i}`, `u${i}@example.com`, i % 3 ? 'user' : 'admin,user', i % 4 === 0 ? 1 : 0)
    sqlite.exec("UPDATE user SET role = 'admin' WHERE id IN ('u1', 'u2', 'u3')")
    sqlite.exec("UPDATE user SET role = NULL WHERE id = 'u4'")
    sqlite.exec("UPDATE user SET banned = 1 WHERE id LIKE 'u6%'")
    sqlite.exec("UPDATE user SET banned = NULL WHERE id = 'u61'")
    sqlite.exec("UPDATE user SET name = 'renamed' WHERE id = 'u7'")
    sqlite.exec("UPDATE user SET role = role, banned = banned WHERE id = 'u8'")
    sqlite.exec("DELETE FROM user WHERE id IN ('u0', 'u10', 'u55', 'u4')")
    expect(maintained()).toEqual(grouped())
  })

  it('answers each filter total as today count(*) does', () => {
    const count = (where: string, ...args: unknown[]) =>
      sqlite
        .prepare(`SELECT count(*) FROM user WHERE ${where}`)
        .pluck()
        .get(...args)
    const counted = (role: string) => sqlite.prepare('SELECT coalesce(sum(n), 0) FROM userCount WHERE role = ?').pluck().get(role)
    const banned = (b: number) => sqlite.prepare('SELECT coalesce(sum(n), 0) FROM userCount WHERE banned = ?').pluck().get(b)
    for (const role of ['admin', 'user', 'admin,user', 'nobody']) expect(counted(role)).toBe(count('role = ?', role))
    for (const b of [0, 1]) expect(banned(b)).toBe(count('coalesce(banned, 0) = ?', b))
    expect(sqlite.prepare('SELECT sum(n) FROM userCount').pluck().get()).toBe(count('1'))
    // starts_with through the lower(email) range: the same rows as LIKE (ASCII case-insensitive).
    const prefix = sqlite
      .prepare("SELECT count(*) FROM user WHERE lower(email) >= ? AND lower(email) < ? AND email LIKE ? ESCAPE '\\'")
      .pluck()
    expect(prefix.get('u1', 'u2', 'u1%')).toBe(count("email LIKE 'u1%'"))
    expect(prefix.get('u1', 'u2', 'u1%')).toBeGreaterThan(5)
    // An ASCII prefix: the range alone is exact (SQLite's lower() and LIKE both fold ASCII only).
    const range = sqlite.prepare('SELECT count(*) FROM user WHERE lower(email) >= ? AND lower(email) < ?').pluck()
    for (const p of ['u', 'u1', 'U2', 'u5', 'x']) {
      const lower = p.toLowerCase()
      const upper = lower.slice(0, -1) + String.fromCharCode(lower.charCodeAt(lower.length - 1) + 1)
      expect(range.get(lower, upper)).toBe(count("email LIKE ? ESCAPE '\\'", `${p}%`))
    }
    const plan = sqlite.prepare("EXPLAIN QUERY PLAN SELECT count(*) FROM user WHERE lower(email) >= 'u1' AND lower(email) < 'u2'").all()
    expect(JSON.stringify(plan)).toContain('user_email_lower_idx')
  })
})
