import { refusalNow } from '../../core/admission.js'
import type { GatehouseConfig } from '../../config/schema.js'
import type { AuthContext } from '../../core/context.js'
import type { ChangeSignal, Storage } from '../../db/storage.js'
import { type GroupSources, groupNames, groupsRule } from '../groups/names.js'
import { loginNameOf } from '../username/rules.js'
import { type Layout, layoutOfBase } from './dn.js'
import { listOrganizationSlugs, listTeamNames } from '../organization/store.js'
import { type DirectoryRow, directoryPeopleReader, parseSources, ROW } from './store.js'

/**
 * The directory in memory, indexed (issue 48): everyone the directory may show, in its order
 * (oldest first), with maps from uid, mail and cn to people (mail and cn filled at first need:
 * `namesBuilt`), from a person to their groups and from a group to its members. A search looks
 * its candidates up here instead of scanning: a person's groups (`(member=<dn>)`) cost their own
 * groups, an equality on uid, mail or cn one map lookup, `memberOf` a list already built, and a
 * page resumes at its place in the sorted list (a binary search), whatever its position.
 *
 * It follows the directory, not the database: it is loaded again only when the change signal of
 * the scope 'directory' moved (a person's shown columns, a role, a ban, an organization, a
 * membership, a team: storage.ts `changeSignal({ scope: 'directory' })`), or the configuration
 * changed (the base DN, the group rule). A sign-in, an audit row, a session or a throttle row
 * leaves it warm. On PostgreSQL the signal counts the instances' notifications, with `sync()`
 * awaited at the start of each operation (`begin`), so a change committed anywhere before an
 * operation began is what that operation sees.
 *
 * Loading reads organizations' slugs and teams' names first (a few hundred rows, through
 * organization's store), then the people in chunks (CHUNK rows per query, oldest first,
 * keyset-paged) as arrays of plain values (store.ts, `storage.rows`), each chunk of people (each
 * with their group sources as one text: store.ts `parseSources`) indexed as it arrives, and
 * yields to the event loop once SLICE_MS have passed (`TimeSlices`, checked between chunks and
 * every 64 people): loading a hundred thousand people holds HTTP for a few milliseconds at a time
 * (and the collector's pauses). Concurrent operations share one load. Clock-dependent rules (a ban's expiry) are applied by the caller at
 * each operation, never here. Rows are shared: never mutated. It is first built right after the
 * listener opens (`warm`), so the first search after a start finds it built or being built.
 */

/** Rows per query while loading (one task of a few milliseconds each: the query, then its rows as arrays). */
const CHUNK = 1_000
/** The longest the load works between two yields, in milliseconds (checked every 64 people). */
const SLICE_MS = 4

export interface IndexedGroup {
  name: string
  /** The name in lower case (group names match case-insensitively, as DNs do here). */
  lower: string
  dn: string
  /** Normalized DN. */
  ndn: string
  /** entryUUID, computed at first use. */
  uuid?: string
  /** Its members, in directory order (bans not applied). */
  members: IndexedPerson[]
}

/**
 * A person as the index holds them: the directory's columns (store.ts DirectoryRow) without what
 * only the load needs (the role, the username: the uid and the groups are made of them), times as
 * epoch milliseconds. A hundred thousand of these are most of the index's memory: one object each,
 * no Date, no per-person arrays.
 */
export interface IndexedPerson {
  id: string
  name: string
  email: string
  emailVerified: boolean
  banned: boolean | null
  banExpires: Date | null
  /** Epoch milliseconds. */
  createdAt: number
  /** Epoch milliseconds. */
  updatedAt: number
  /** Position in `DirectoryIndex.people`. */
  at: number
  uid: string
  dn: string
  /** Normalized DN (the same string as `dn` when they are equal). */
  ndn: string
  /** The shared group rule's groups, in its order (shared by everyone with the same sources: never mutated). */
  groups: readonly IndexedGroup[]
  /** entryUUID, computed at first use. */
  uuid: string | undefined
}

/** Yields to the event loop (other connections, HTTP) between slices of long work. */
export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** Whether a row sorts before (negative), at or after a (createdAt, id) key: the directory's order. */
export function compareKey(row: { createdAt: number; id: string }, createdAt: number, id: string): number {
  const t = row.createdAt
  if (t !== createdAt) return t < createdAt ? -1 : 1
  return row.id < id ? -1 : row.id > id ? 1 : 0
}

export class DirectoryIndex {
  readonly people: IndexedPerson[] = []
  readonly byUid = new Map<string, IndexedPerson>()
  /**
   * By mail and cn (lower case): one person, or the list when several share it (`lookup`). Empty
   * until `namesBuilt()` resolved: built at the first search that narrows by mail or cn, not by the
   * load (syncs and searches by uid or member never read them, and each load after a directory
   * change skips two map entries per person).
   */
  readonly byMail = new Map<string, IndexedPerson | IndexedPerson[]>()
  readonly byCn = new Map<string, IndexedPerson | IndexedPerson[]>()
  private names: Promise<void> | null = null
  /** Whether `byMail` and `byCn` are filled (`namesBuilt()` resolved). */
  namesReady = false
  /** Groups by name (case-insensitive order, then by name). */
  readonly groups: IndexedGroup[] = []
  readonly groupByName = new Map<string, IndexedGroup>()

  constructor(
    /** The configuration it was built under (DNs and the group rule depend on it). */
    readonly config: GatehouseConfig,
    readonly layout: Layout,
  ) {}

  /**
   * A user's indexed person (not groups' `personOf`, the faces' record of a person): found through
   * their uid (the login name, the key of `byUid`), so the load keeps no map by id (a hundred
   * thousand entries, read only for a viewer's own entry). Two people sharing a uid (the first one
   * keeps it) are told apart by a walk.
   */
  entryOf(user: { id: string; username: string | null; email: string }): IndexedPerson | undefined {
    const found = this.byUid.get(loginNameOf(user).toLowerCase())
    if (found?.id === user.id) return found
    return this.people.find((person) => person.id === user.id)
  }

  /**
   * Fills `byMail` and `byCn` once (every caller shares the one build), yielding by elapsed time as
   * the load does: the first search by mail or cn of a hundred thousand people holds HTTP for a few
   * milliseconds at a time, never for the whole build.
   */
  namesBuilt(slices: TimeSlices = new TimeSlices()): Promise<void> {
    this.names ??= (async () => {
      const people = this.people
      for (let k = 0; k < people.length; k++) {
        if ((k & 63) === 63) await slices.maybeYield()
        const person = people[k] as IndexedPerson
        add(this.byMail, person.email.toLowerCase(), person)
        add(this.byCn, (person.name.trim() || person.uid).toLowerCase(), person)
      }
      this.namesReady = true
    })()
    return this.names
  }

  /** The people under a key of `byMail` or `byCn`, in directory order. */
  static lookup(map: Map<string, IndexedPerson | IndexedPerson[]>, key: string): readonly IndexedPerson[] {
    const found = map.get(key)
    return found === undefined ? [] : Array.isArray(found) ? found : [found]
  }

  /** The first position in `list` (sorted in directory order) at or after a (createdAt, id) key. */
  static seekPerson(list: readonly IndexedPerson[], createdAt: number, id: string): number {
    let lo = 0
    let hi = list.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (compareKey(list[mid] as IndexedPerson, createdAt, id) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** The first position in `list` (sorted by group order) at or after a group's lower-case name and name. */
  static seekGroup(list: readonly IndexedGroup[], lower: string, name: string): number {
    let lo = 0
    let hi = list.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (compareGroups(list[mid] as IndexedGroup, lower, name) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

function compareGroups(group: IndexedGroup, lower: string, name: string): number {
  if (group.lower !== lower) return group.lower < lower ? -1 : 1
  return group.name < name ? -1 : group.name > name ? 1 : 0
}

/** Adds a person under a key: alone, or into a list once a second one shares it. */
function add(map: Map<string, IndexedPerson | IndexedPerson[]>, key: string, person: IndexedPerson): void {
  const found = map.get(key)
  if (found === undefined) map.set(key, person)
  else if (Array.isArray(found)) found.push(person)
  else map.set(key, [found, person])
}

/**
 * Long work in tasks of a few milliseconds: `due()` answers true once `budgetMs` have passed since
 * the last yield, and `yield()` gives the event loop a turn. Bounded by elapsed time rather than by
 * a count of rows, so a slow machine (or a slow row) still yields every few milliseconds. The clock
 * is injectable (tests count the turns with a clock that moves at every reading).
 */
export class TimeSlices {
  private started: number
  /** Turns given to the event loop (tests and the bench). */
  yields = 0

  constructor(
    private readonly now: () => number = performance.now.bind(performance),
    private readonly budgetMs = SLICE_MS,
  ) {
    this.started = now()
  }

  due(): boolean {
    return this.now() - this.started >= this.budgetMs
  }

  async yield(): Promise<void> {
    this.yields++
    await yieldToLoop()
    this.started = this.now()
  }

  /** Yields when the slice's time is up. */
  async maybeYield(): Promise<void> {
    if (this.due()) await this.yield()
  }
}

/** Reads everyone, with what their groups are made of, in chunks, yielding by elapsed time, and indexes them. */
async function load(ctx: AuthContext, config: GatehouseConfig, slices: TimeSlices): Promise<DirectoryIndex> {
  const layout = layoutOfBase(config.ldap.baseDN)
  const index = new DirectoryIndex(config, layout)
  const rule = groupsRule(config)
  const wanted = { memberships: rule.organizations || rule.memberRoles, teams: rule.teams }
  // Organizations and teams first (a few hundred rows): people's sources name them by id.
  const slugOf = new Map<string, string>()
  if (wanted.memberships || wanted.teams) for (const { id, slug } of await listOrganizationSlugs(ctx)) slugOf.set(id, slug)
  const teamOf = new Map<string, { slug: string; teamName: string }>()
  if (wanted.teams)
    for (const { id, organizationId, name } of await listTeamNames(ctx)) {
      const slug = slugOf.get(organizationId)
      if (slug !== undefined) teamOf.set(id, { slug, teamName: name })
    }
  /** The group rule's input from a person's sources text (store.ts parseSources). */
  const sourcesOf = (text: string): GroupSources => {
    const parts = parseSources(text)
    const memberships: Array<{ slug: string; role: string }> = []
    for (const [organizationId, role] of parts.memberships) {
      const slug = slugOf.get(organizationId)
      if (slug !== undefined) memberships.push({ slug, role })
    }
    const teams: Array<{ slug: string; teamName: string }> = []
    for (const id of parts.teams) {
      const found = teamOf.get(id)
      if (found) teams.push(found)
    }
    return { role: parts.role, memberships, teams }
  }
  const groupByName = new Map<string, IndexedGroup>()
  // Each person's sources arrive as one text (store.ts parseSources): people with the same text
  // have the same groups, so the rule runs once per distinct text (a few hundred for a hundred
  // thousand people), its groups shared.
  const groupsBySources = new Map<string, IndexedGroup[]>()
  const none: never[] = []
  const named = { username: null as string | null, email: '' }
  const readChunk = directoryPeopleReader(ctx, CHUNK, wanted)
  for (let after: DirectoryRow | null = null; ; ) {
    const chunk = await readChunk(after ? { createdAt: after[ROW.createdAt], id: after[ROW.id] } : null)
    for (let k = 0; k < chunk.length; k++) {
      // A chunk is read in one task (a few milliseconds); indexing it yields by time.
      if ((k & 63) === 63) await slices.maybeYield()
      const row = chunk[k] as DirectoryRow
      const id = row[ROW.id]
      const email = row[ROW.email]
      const name = row[ROW.name]
      named.username = row[ROW.username]
      named.email = email
      const uid = loginNameOf(named)
      const dn = layout.personDn(uid)
      const lower = uid.toLowerCase()
      // Most uids are lower case already: their normalized DN is the DN itself (no second string).
      const ndn = lower === uid && layout.npeople === layout.people ? dn : layout.personNdn(uid)
      const banExpires = row[ROW.banExpires]
      const sources = row[ROW.sources]
      let groups = groupsBySources.get(sources)
      if (!groups) {
        groups = []
        for (const groupName of groupNames(sourcesOf(sources), rule)) {
          let group = groupByName.get(groupName)
          if (!group) {
            group = {
              name: groupName,
              lower: groupName.toLowerCase(),
              dn: layout.groupDn(groupName),
              ndn: layout.groupNdn(groupName),
              members: [],
            }
            groupByName.set(groupName, group)
          }
          groups.push(group)
        }
        groupsBySources.set(sources, groups.length === 0 ? none : groups)
      }
      const person: IndexedPerson = {
        id,
        name,
        email,
        emailVerified: row[ROW.emailVerified],
        banned: row[ROW.banned],
        banExpires: banExpires === null ? null : new Date(banExpires),
        createdAt: row[ROW.createdAt],
        updatedAt: row[ROW.updatedAt],
        at: index.people.length,
        uid,
        dn,
        ndn,
        groups,
        uuid: undefined,
      }
      index.people.push(person)
      // The first one of a uid wins, as the database's lookup of one row would.
      if (!index.byUid.has(lower)) index.byUid.set(lower, person)
      for (let g = 0; g < groups.length; g++) (groups[g] as IndexedGroup).members.push(person)
    }
    if (chunk.length < CHUNK) break
    after = chunk[chunk.length - 1] as DirectoryRow
    await slices.maybeYield()
  }
  const groups = [...groupByName.values()].sort((a, b) => compareGroups(a, b.lower, b.name))
  for (const group of groups) {
    index.groups.push(group)
    // Case-insensitive names: the first in order answers for its lower-case name.
    if (!index.groupByName.has(group.lower)) index.groupByName.set(group.lower, group)
  }
  return index
}

/** Whether a person shows in the directory now: the one admission rule's row part (not banned at this instant, verified when required). */
export const shownNow = (ctx: AuthContext, person: IndexedPerson): boolean => refusalNow(ctx, person) === null

/**
 * The index of one storage, loaded on demand and again after the directory changed. `begin()` at
 * the start of each operation; `current()` then answers the index as of that operation.
 */
export class DirectoryIndexes {
  private readonly signal: ChangeSignal
  /** Moves each time the signal reports a change (the index of an older generation is stale). */
  private generation = 0
  private built: { generation: number; index: DirectoryIndex } | null = null
  private loading: { generation: number; promise: Promise<DirectoryIndex> } | null = null
  /** How many times the directory was read from the database (tests and metrics). */
  loads = 0
  /** The load's clock for its time slices (monotonic milliseconds; tests inject one that moves at each reading). */
  clock: () => number = performance.now.bind(performance)

  constructor(private readonly ctx: AuthContext) {
    this.signal = ctx.storage.changeSignal({ scope: 'directory' })
  }

  /** Once at the start of each operation: on PostgreSQL, every commit made before it is reflected. */
  async begin(): Promise<void> {
    if (this.signal.sync) await this.signal.sync()
  }

  /** The index as of now (loaded, or loaded again, when the directory or the configuration changed). */
  async current(): Promise<DirectoryIndex> {
    if (this.signal.changed()) this.generation++
    const config = this.ctx.config()
    const built = this.built
    if (built && built.generation === this.generation && built.index.config === config) return built.index
    const loading = this.loading
    // A load begun in this generation (or later) read everything committed before this operation began.
    if (loading && loading.generation >= this.generation) {
      const index = await loading.promise
      if (index.config === config) return index
    }
    const generation = this.generation
    this.loads++
    const promise = load(this.ctx, config, new TimeSlices(this.clock))
    this.loading = { generation, promise }
    try {
      const index = await promise
      if (!this.built || this.built.generation <= generation) this.built = { generation, index }
      return index
    } finally {
      if (this.loading?.promise === promise) this.loading = null
    }
  }

  /**
   * Builds the index ahead of the first search (called once the listener serves): the first sync
   * after start then costs what any other does. A failure (the database closing meanwhile) is left
   * to the next operation's load.
   */
  warm(): Promise<void> {
    return this.begin()
      .then(() => this.current())
      .then(
        () => undefined,
        () => undefined,
      )
  }

  /** Drops the index (memory back) until the next operation needs it. */
  drop(): void {
    this.built = null
  }
}

const indexes = new WeakMap<Storage, DirectoryIndexes>()

/** The directory index of this server (one per storage, shared by every connection). */
export function indexesOf(ctx: AuthContext): DirectoryIndexes {
  let found = indexes.get(ctx.storage)
  if (!found) {
    found = new DirectoryIndexes(ctx)
    indexes.set(ctx.storage, found)
  }
  return found
}
