import { eq } from 'drizzle-orm'
import { Client } from 'ldapts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { organization, team, user } from '../../../server/db/schema.js'
import { banUser, setRole, systemActor } from '../../../server/features/admin/index.js'
import { type DirectoryIndexes, indexesOf } from '../../../server/features/ldap/directory-index.js'
import { personOf } from '../../../server/features/groups/person.js'
import { insertMember } from '../../../server/features/organization/store.js'
import {
  chunkAfter,
  type DirectoryRow,
  directoryPeopleReader,
  directoryPeopleStatements,
  findUser,
  parseSources,
  ROW,
} from '../../../server/features/ldap/store.js'
import { joinTeamsNamed, verifiedSignUp } from '../../helpers/members.js'
import { seedPeople } from './edge-helpers.js'
import { BASE, client, type LdapServer, PASSWORD, person, startLdapServer } from './helpers.js'

/**
 * The directory's index (server/features/ldap/directory-index.ts, issue 48): it is read again only
 * when what the directory shows changed (not at a sign-in or a bind's audit row); a person's
 * groups are found from the person, memberOf follows a role change, pages of a large directory
 * (5 000 people seeded through the store) are stable and complete, and HTTP answers during them.
 */

/**
 * Runs `work` with the index's clock 10 ms later at each reading (every time slice ends at its
 * first check) and counts the event loop's turns meanwhile, one per setImmediate: the yields.
 */
async function turnsDuring<T>(indexes: DirectoryIndexes, work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  const real = indexes.clock
  let now = 0
  indexes.clock = () => (now += 10)
  let turns = 0
  let running = true
  const spin = () => {
    if (!running) return
    turns++
    setImmediate(spin)
  }
  setImmediate(spin)
  try {
    const result = await work()
    return { result, turns }
  } finally {
    running = false
    indexes.clock = real
  }
}

let server: LdapServer
beforeAll(async () => {
  server = await startLdapServer()
})
afterAll(() => server?.close())

describe('the directory index', () => {
  it('stays warm across a sign-in and a bind (audit rows, sessions), is read again after a ban', async () => {
    const reader = await person(server, 'idxreader', 'Index Reader', 'admin')
    const other = await person(server, 'idxother', 'Index Other')
    const ctx = server.gatehouse.ctx
    const c = await client(server, reader.dn)
    const everyone = async () =>
      (await c.search(`ou=people,${BASE}`, { scope: 'one', filter: '(uid=idx*)', attributes: ['uid'] })).searchEntries.map((e) => e.uid)
    expect((await everyone()).sort()).toEqual(['idxother', 'idxreader'])
    const loads = indexesOf(ctx).loads
    // A sign-in over HTTP (a session, an audit row) and a main-password bind (an audit row): still warm.
    const signIn = await fetch(`${server.base}/sign-in/username`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.origin },
      body: JSON.stringify({ username: 'idxother', password: PASSWORD }),
    })
    expect(signIn.status).toBe(200)
    const bound = await client(server, other.dn)
    await bound.unbind()
    expect((await everyone()).sort()).toEqual(['idxother', 'idxreader'])
    expect(indexesOf(ctx).loads).toBe(loads)
    // A ban is what the directory shows: read again, and the banned person is gone at once.
    await banUser(ctx, systemActor('cli'), { userId: other.id }, null)
    expect(await everyone()).toEqual(['idxreader'])
    expect(indexesOf(ctx).loads).toBe(loads + 1)
    await c.unbind()
  })

  it('finds a person’s groups by member, and memberOf follows a role change', async () => {
    const reader = await person(server, 'grpreader', 'Group Reader', 'admin')
    const subject = await person(server, 'grpsubject', 'Group Subject')
    const c = await client(server, reader.dn)
    const groupsOf = async (dn: string) =>
      (
        await c.search(`ou=groups,${BASE}`, { scope: 'one', filter: `(&(objectClass=groupOfNames)(member=${dn}))`, attributes: ['cn'] })
      ).searchEntries
        .map((e) => e.cn)
        .sort()
    const memberOf = async () => (await c.search(subject.dn, { scope: 'base', attributes: ['memberOf'] })).searchEntries[0]?.memberOf
    expect(await groupsOf(subject.dn)).toEqual(['user'])
    expect(await groupsOf(reader.dn)).toEqual(['admin'])
    expect(await memberOf()).toBe(`cn=user,ou=groups,${BASE}`)
    await setRole(server.gatehouse.ctx, systemActor('cli'), { userId: subject.id, role: ['admin', 'user'] }, null)
    expect(await groupsOf(subject.dn)).toEqual(['admin', 'user'])
    expect(await memberOf()).toEqual([`cn=admin,ou=groups,${BASE}`, `cn=user,ou=groups,${BASE}`])
    // A DN that names nobody is in no group; an upper-case DN names the same person.
    expect(await groupsOf(`uid=nobody,ou=people,${BASE}`)).toEqual([])
    expect(await groupsOf(subject.dn.toUpperCase())).toEqual(['admin', 'user'])
    await c.unbind()
  })

  it('answers each search with the attributes it asked for, though a person’s encoding is kept between searches', async () => {
    const reader = await person(server, 'keptreader', 'Kept Reader', 'admin')
    const subject = await person(server, 'keptsubject', 'Kept Subject')
    const c = await client(server, reader.dn)
    // A search over many people (its encodings are kept on each person), the subject's entry picked out.
    const ask = async (attributes: string[], typesOnly = false) =>
      (
        await c.search(`ou=people,${BASE}`, { scope: 'one', filter: '(uid=kept*)', attributes, returnAttributeValues: !typesOnly })
      ).searchEntries.find((e) => e.dn === subject.dn)
    // The same selection twice (the kept bytes), then others: each answer is its own selection's.
    expect(await ask(['uid', 'mail'])).toEqual({ dn: subject.dn, uid: 'keptsubject', mail: 'keptsubject@example.com' })
    expect(await ask(['uid', 'mail'])).toEqual({ dn: subject.dn, uid: 'keptsubject', mail: 'keptsubject@example.com' })
    expect(await ask(['cn'])).toEqual({ dn: subject.dn, cn: 'Kept Subject' })
    expect(await ask(['uid'], true)).toEqual({ dn: subject.dn, uid: [] })
    expect(await ask(['uid'])).toEqual({ dn: subject.dn, uid: 'keptsubject' })
    // A lookup of one person with another selection, then the many-people search again.
    expect((await c.search(subject.dn, { scope: 'base', attributes: ['mail'] })).searchEntries[0]?.mail).toBe('keptsubject@example.com')
    expect(await ask(['uid'])).toEqual({ dn: subject.dn, uid: 'keptsubject' })
    // A rename is a new index: the kept bytes go with the old one.
    await server.gatehouse.ctx.db.update(user).set({ name: 'Kept Renamed' }).where(eq(user.id, subject.id))
    expect(await ask(['cn'])).toEqual({ dn: subject.dn, cn: 'Kept Renamed' })
    await c.unbind()
  })

  it('pages through 5 000 people seeded through the store, each once and in order, while HTTP answers', async () => {
    const ctx = server.gatehouse.ctx
    await seedPeople(ctx, 5_000, 'bulk')
    const reader = await person(server, 'bulkreader', 'Bulk Reader', 'admin')
    const c = new Client({ url: server.url, timeout: 60_000 })
    await c.bind(reader.dn, PASSWORD)
    // HTTP asked while the sync runs (timings are the bench's: here only that it answers).
    const sync = c.search(`ou=people,${BASE}`, {
      scope: 'one',
      filter: '(&(objectClass=inetOrgPerson)(uid=bulk*))',
      attributes: ['uid', 'memberOf'],
      paged: { pageSize: 500 },
    })
    const ok = await fetch(`${server.base}/get-session`)
    expect(ok.status).toBe(200)
    const paged = await sync
    const uids = paged.searchEntries.map((e) => e.uid as string)
    expect(uids).toHaveLength(5_001)
    expect(new Set(uids).size).toBe(5_001)
    // Directory order: oldest first (seeded people by creation time, then id), the reader last.
    expect(uids.slice(0, 4)).toEqual(['bulk0', 'bulk1', 'bulk2', 'bulk3'])
    expect(uids.at(-2)).toBe('bulk4999')
    expect(uids.at(-1)).toBe('bulkreader')
    expect(paged.searchEntries[0]?.memberOf).toBe(`cn=user,ou=groups,${BASE}`)
    await c.unbind()
  })

  it('a load yields to the event loop by elapsed time, within a chunk of rows too (a clock that moves at each reading)', async () => {
    const ctx = server.gatehouse.ctx
    await seedPeople(ctx, 3_000, 'slices')
    const indexes = indexesOf(ctx)
    indexes.drop()
    await indexes.begin()
    const { result: index, turns } = await turnsDuring(indexes, () => indexes.current())
    expect(index.people.length).toBeGreaterThanOrEqual(3_000)
    // At least one turn per 64 people indexed; by chunks of rows alone it would be a handful.
    expect(turns).toBeGreaterThanOrEqual(3_000 / 64)
  })

  it('builds the mail and cn maps at the first search by mail or cn, once, yielding by time, and finds what a scan finds', async () => {
    const ctx = server.gatehouse.ctx
    await seedPeople(ctx, 2_000, 'names')
    const reader = await person(server, 'namesreader', 'Names Reader', 'admin')
    const c = await client(server, reader.dn)
    const indexes = indexesOf(ctx)
    try {
      const search = async (filter: string) =>
        (await c.search(`ou=people,${BASE}`, { scope: 'one', filter, attributes: ['uid'] })).searchEntries.map((e) => e.uid as string)
      // A sync and a search by uid leave them empty (the load does not build them).
      expect(await search('(uid=names7)')).toEqual(['names7'])
      const index = await indexes.current()
      expect(index.namesReady).toBe(false)
      expect(index.byMail.size).toBe(0)
      // The first search by mail builds both, in slices.
      const { result: found, turns } = await turnsDuring(indexes, () => search('(mail=NAMES1234@example.com)'))
      expect(found).toEqual(['names1234'])
      expect(index.namesReady).toBe(true)
      expect(turns).toBeGreaterThanOrEqual(2_000 / 64)
      expect(index.byMail.size).toBeGreaterThanOrEqual(2_001)
      // By cn (case-insensitive, two people under one name), after a change: a new index's maps.
      const loads = indexes.loads
      await person(server, 'namestwin', 'Names Reader')
      // (Sorted: both made within one second, their directory order is their ids'.)
      expect((await search('(cn=names READER)')).sort()).toEqual(['namesreader', 'namestwin'])
      // The new person was a change: a new index, whose maps the search by cn built again.
      expect(indexes.loads).toBe(loads + 1)
      expect((await indexes.current()).namesReady).toBe(true)
      // What narrowing finds is what the filter alone finds: a filter the maps cannot narrow (an OR).
      expect((await search('(|(cn=Names Reader)(uid=nobody))')).sort()).toEqual(['namesreader', 'namestwin'])
      expect(await search('(&(mail=names5@example.com)(cn=Seeded Person 5))')).toEqual(['names5'])
      expect(await search('(&(mail=names5@example.com)(cn=Seeded Person 6))')).toEqual([])
      expect(await search('(mail=nobody@example.com)')).toEqual([])
    } finally {
      await c.unbind()
    }
  })

  it('holds the groups personOf reads for each person, whatever team names and member roles hold (the sources read as one text per person)', async () => {
    const ctx = server.gatehouse.ctx
    const up = await verifiedSignUp(server, { username: 'jsonteams', name: 'Json Teams', email: 'jsonteams@example.com' })
    // Characters JSON would escape, brackets and commas, in team names (the text holds team ids, the names are mapped after).
    await joinTeamsNamed(up.client, up.user.id, { name: 'Quotes', slug: 'quotes-json' }, [
      'Say "hi"',
      'back\\slash',
      '[x], {y}',
      'Tab\there',
    ])
    await joinTeamsNamed(up.client, up.user.id, { name: 'Second', slug: 'aaa-second' }, [])
    // A second member of one organization, with two member roles, and someone in none.
    const other = await verifiedSignUp(server, { username: 'jsonother', name: 'Json Other', email: 'jsonother@example.com' })
    const [quotes] = await ctx.db.select().from(organization).where(eq(organization.slug, 'quotes-json'))
    if (!quotes) throw new Error('no organization quotes-json')
    await insertMember(ctx, {
      id: 'json-other-member',
      organizationId: quotes.id,
      userId: other.user.id,
      role: 'admin,member',
      teamId: null,
      createdAt: new Date(),
    })
    const loner = await verifiedSignUp(server, { username: 'jsonloner', name: 'Json Loner', email: 'jsonloner@example.com' })
    const indexes = indexesOf(ctx)
    await indexes.begin()
    const index = await indexes.current()
    const groupsIn = (id: string) => (index.people.find((person) => person.id === id)?.groups ?? []).map((g) => g.name)
    for (const id of [up.user.id, other.user.id, loner.user.id]) {
      const row = await findUser(ctx, id)
      if (!row) throw new Error(`no user ${id}`)
      // personOf reads memberships and teams with joins (organization's store): another path to the same groups.
      expect(groupsIn(id)).toEqual((await personOf(ctx, row)).groups)
      // Times read as epoch milliseconds (on PostgreSQL computed by the database) are the Date's own.
      const indexed = index.people.find((person) => person.id === id)
      expect([indexed?.createdAt, indexed?.updatedAt]).toEqual([row.createdAt.getTime(), row.updatedAt.getTime()])
    }
    expect(groupsIn(up.user.id)).toEqual([
      'user',
      'aaa-second',
      'aaa-second:owner',
      'quotes-json',
      'quotes-json:owner',
      'aaa-second/second',
      'quotes-json/back-slash',
      'quotes-json/quotes',
      'quotes-json/say-hi',
      'quotes-json/tab-here',
      'quotes-json/x-y',
    ])
    expect(groupsIn(other.user.id)).toEqual(['user', 'quotes-json', 'quotes-json:admin', 'quotes-json:member'])
    expect(groupsIn(loner.user.id)).toEqual(['user'])
  })

  it('reads only the sources the group rule needs: memberships, teams, both or neither (each engine its own select)', async () => {
    const ctx = server.gatehouse.ctx
    const up = await verifiedSignUp(server, { username: 'wantedsrc', name: 'Wanted Sources', email: 'wantedsrc@example.com' })
    await joinTeamsNamed(up.client, up.user.id, { name: 'Wanted', slug: 'wanted-src' }, ['Alpha', 'Beta'])
    const [org] = await ctx.db.select().from(organization).where(eq(organization.slug, 'wanted-src'))
    if (!org) throw new Error('no organization wanted-src')
    const teamIds = (await ctx.db.select().from(team).where(eq(team.organizationId, org.id))).map((t) => t.id).sort()
    const sourcesOf = async (wanted: { memberships: boolean; teams: boolean }) => {
      const read = directoryPeopleReader(ctx, 1_000, wanted)
      let found: DirectoryRow | undefined
      for (let after: DirectoryRow | null = null; ; ) {
        const chunk = await read(after ? { createdAt: after[ROW.createdAt], id: after[ROW.id] } : null)
        found ??= chunk.find((row) => row[ROW.id] === up.user.id)
        if (chunk.length < 1_000) break
        after = chunk[chunk.length - 1] as DirectoryRow
      }
      if (!found) throw new Error('wantedsrc not read')
      const parts = parseSources(found[ROW.sources])
      return { ...parts, teams: [...parts.teams].sort() }
    }
    const memberships: Array<[string, string]> = [[org.id, 'owner']]
    expect(await sourcesOf({ memberships: true, teams: true })).toEqual({ role: 'user', memberships, teams: teamIds })
    expect(await sourcesOf({ memberships: true, teams: false })).toEqual({ role: 'user', memberships, teams: [] })
    expect(await sourcesOf({ memberships: false, teams: true })).toEqual({ role: 'user', memberships: [], teams: teamIds })
    expect(await sourcesOf({ memberships: false, teams: false })).toEqual({ role: 'user', memberships: [], teams: [] })
  })

  it('reads each chunk of people as one range of the index user (createdAt, id), without sorting, memberships from the index alone (SQLite: migrations 0023, 0024)', async () => {
    const ctx = server.gatehouse.ctx
    if (ctx.storage.dialect !== 'sqlite') return // PostgreSQL: tests/db/postgres.test.ts checks the index exists; its planner's choice depends on the table's size
    // The select every chunk after the first runs (compiled once per load, its position filled in).
    const { next } = directoryPeopleStatements(ctx, 1_000, { memberships: true, teams: true })
    const { sql, params } = chunkAfter(next, { createdAt: Date.UTC(2026, 0, 1), id: 'u1' })
    const plan = await ctx.storage.rows({ toSQL: () => ({ sql: `explain query plan ${sql}`, params }) })
    const details = plan.map((row) => String(row[3])).join('\n')
    expect(details).toContain('user_created_at_id_idx ((createdAt,id)>(?,?))')
    expect(details).not.toContain('TEMP B-TREE')
    // Each person's memberships and teams come from the index alone (migration 0024): no lookup of the row.
    expect(details).toContain('SEARCH member USING COVERING INDEX member_user_org_role_idx (userId=?)')
    expect(details).toContain('SEARCH teamMember USING COVERING INDEX team_member_user_team_idx (userId=?)')
  })
})
