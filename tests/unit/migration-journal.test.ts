import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * drizzle's migrator applies only the migrations whose journal `when` is later than the newest one a
 * database has applied. A migration whose `when` is earlier than its predecessor's (branches
 * generated in parallel, renumbered at merge) is silently skipped on every database that already
 * holds the predecessor: the upgrade starts on a schema without it. Each journal must be strictly
 * increasing, in the order of its entries.
 */
const root = join(import.meta.dirname, '..', '..')

describe('migration journals', () => {
  it.each(['server/db/migrations', 'server/db/pg/migrations'])(
    '%s: every entry is later than the one before, numbered in order',
    (folder) => {
      const journal = JSON.parse(readFileSync(join(root, folder, 'meta', '_journal.json'), 'utf8')) as {
        entries: Array<{ idx: number; when: number; tag: string }>
      }
      const out = journal.entries.flatMap((entry, i) => {
        const previous = journal.entries[i - 1]
        const problems: string[] = []
        if (entry.idx !== i || !entry.tag.startsWith(String(i).padStart(4, '0'))) problems.push(`${entry.tag}: numbered out of order`)
        if (previous && entry.when <= previous.when)
          problems.push(`${entry.tag}: when ${entry.when} not after ${previous.tag}'s ${previous.when}`)
        return problems
      })
      expect(out).toEqual([])
    },
  )
})
