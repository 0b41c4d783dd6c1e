import crypto from 'node:crypto'
import { refusalNow } from '../../core/admission.js'
import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { splitRoles } from '../admin/access.js'
import { loginNameOf } from '../username/rules.js'
import {
  type DirectoryIndex,
  type IndexedGroup,
  type IndexedPerson,
  DirectoryIndex as Index,
  indexesOf,
  shownNow,
  TimeSlices,
  yieldToLoop,
} from './directory-index.js'
import { DnError, type Layout, layoutOfBase, normalizeDn, normalizeRdns, parseDn, type Rdn } from './dn.js'
import {
  type AnswerAttribute,
  type AnswerEntry,
  encodeAttribute,
  type EntryWriter,
  type Filter,
  OID,
  ResultCode,
  type Scope,
} from './wire.js'

export { Layout } from './dn.js'

/**
 * The directory an LDAP client sees (issue 36's contract, docs/LDAP.md): the base entry,
 * `ou=people` (one entry per user the admission rule admits now: not banned, verified when required) and `ou=groups` (one entry per group
 * name the shared group rule gives them), built at each operation from the database's rows as they
 * are now (through reads.ts's cache, which any write anywhere empties); who sees what follows the
 * bound person's roles (`ldap.searchRoles`) as they are now.
 */

/** Who is asking, re-read at every operation. */
export interface Viewer {
  /** The bound person as they are now; null: anonymous (or bound to someone since banned or deleted). */
  user: UserRow | null
  /** Holds one of `ldap.searchRoles`: sees every person and group. */
  everything: boolean
}

interface Attribute {
  name: string
  /** The values (a group's members are listed only when read: a getter). */
  readonly values: string[]
  /** Values are DNs (compared normalized). */
  dn?: boolean
  operational?: boolean
  /** Whether a normalized value is one of the values, without listing them (a group's members). */
  has?: (normalized: string) => boolean
}

export interface Entry {
  dn: string
  /** The normalized DN. */
  ndn: string
  readonly attributes: Attribute[]
  /** One attribute by its canonical name, without building the others (else `attributes` is searched). */
  attribute?(name: string): Attribute | undefined
  /** The indexed person it shows (`writeSelected` encodes it straight from there). */
  readonly person?: IndexedPerson
}

const ALIASES: Record<string, string> = {
  commonname: 'cn',
  surname: 'sn',
  gn: 'givenname',
  userid: 'uid',
  rfc822mailbox: 'mail',
}

/** Canonical names already asked for (attribute names come from a short list; a client's odd ones are bounded). */
const canonicalNames = new Map<string, string>()
const canonical = (name: string): string => {
  let found = canonicalNames.get(name)
  if (found === undefined) {
    const lower = name.toLowerCase()
    found = ALIASES[lower] ?? lower
    if (canonicalNames.size >= 10_000) canonicalNames.clear()
    canonicalNames.set(name, found)
  }
  return found
}

/**
 * The attribute types this directory recognizes (by their short names and ALIASES): those of the
 * object classes its entries carry (RFC 4519, inetOrgPerson's RFC 2798), the operational ones
 * (RFC 4512, 4530, 3045) and `memberOf`. A filter item on any other attribute description is
 * Undefined (RFC 4511 §4.5.1.7), not FALSE: its `not` matches nothing.
 */
const RECOGNIZED = new Set([
  // RFC 4519 and RFC 2798.
  ...['audio', 'businesscategory', 'c', 'carlicense', 'cn', 'dc', 'departmentnumber', 'description', 'destinationindicator'],
  ...['displayname', 'dnqualifier', 'employeenumber', 'employeetype', 'enhancedsearchguide', 'facsimiletelephonenumber'],
  ...['generationqualifier', 'givenname', 'homephone', 'homepostaladdress', 'houseidentifier', 'initials'],
  ...['internationalisdnnumber', 'jpegphoto', 'l', 'labeleduri', 'mail', 'manager', 'member', 'mobile', 'name', 'o', 'ou'],
  ...['owner', 'pager', 'photo', 'physicaldeliveryofficename', 'postaladdress', 'postalcode', 'postofficebox'],
  ...['preferreddeliverymethod', 'preferredlanguage', 'registeredaddress', 'roleoccupant', 'roomnumber', 'searchguide'],
  ...['secretary', 'seealso', 'serialnumber', 'sn', 'st', 'street', 'telephonenumber', 'teletexterminalidentifier'],
  ...['telexnumber', 'title', 'uid', 'uniquemember', 'usercertificate', 'userpassword', 'userpkcs12', 'usersmimecertificate'],
  ...['x121address', 'x500uniqueidentifier', 'memberof'],
  // Operational and the root DSE's.
  ...['objectclass', 'structuralobjectclass', 'createtimestamp', 'modifytimestamp', 'creatorsname', 'modifiersname'],
  ...['subschemasubentry', 'entryuuid', 'namingcontexts', 'supportedldapversion', 'supportedextension', 'supportedcontrol'],
  ...['supportedsaslmechanisms', 'supportedfeatures', 'altserver', 'vendorname', 'vendorversion'],
])

/** Whether this directory recognizes an attribute description (its options aside: `cn;lang-en` is a `cn`). */
const recognized = (description: string): boolean => RECOGNIZED.has(canonical(description.split(';')[0] as string))

export function viewerOf(ctx: AuthContext, user: UserRow | null): Viewer {
  if (!user || refusalNow(ctx, user)) return { user: null, everything: false }
  const searchRoles = ctx.config().ldap.searchRoles
  return { user, everything: splitRoles(user.role, ctx.config()).some((role) => searchRoles.includes(role)) }
}

/** The uid of a user: the login name everyone shares (the username in lower case, else the email). */
export const uidOf = (user: UserRow): string => loginNameOf(user)

/** SHA-1 of a string: the one-shot `crypto.hash` where Node has it (20.12+), else a Hash. */
const sha1: (data: string) => Buffer =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (data) => (crypto as unknown as { hash: (a: string, d: string, e: 'buffer') => Buffer }).hash('sha1', data, 'buffer')
    : (data) => crypto.createHash('sha1').update(data).digest()

/** A stable UUID (version 5 layout, SHA-1 of a fixed namespace and the id) for `entryUUID`. */
export function entryUUID(userId: string): string {
  const hash = sha1(`gatehouse-ldap-entryUUID\0${userId}`)
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80
  const h = hash.subarray(0, 16).toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** Generalized time, UTC, whole seconds: 20260101120000Z. */
export function generalizedTime(date: Date): string {
  const year = date.getUTCFullYear()
  if (year < 1000 || year > 9999) return `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`
  const two = (n: number) => (n < 10 ? `0${n}` : `${n}`)
  return `${year}${two(date.getUTCMonth() + 1)}${two(date.getUTCDate())}${two(date.getUTCHours())}${two(date.getUTCMinutes())}${two(date.getUTCSeconds())}Z`
}

/** Milliseconds of a generalized time value (fractions and offsets accepted); NaN when it is not one. */
export function parseGeneralizedTime(value: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})?(\d{2})?(?:[.,](\d+))?(Z|[+-]\d{2}(?:\d{2})?)$/.exec(value.trim())
  if (!m) return Number.NaN
  const [, y, mo, d, h, mi, s, frac, zone] = m
  let ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi ?? 0), Number(s ?? 0))
  if (frac) ms += Math.round(Number(`0.${frac}`) * 1000)
  if (zone && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1
    ms -= sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(3, 5) || 0)) * 60_000
  }
  return ms
}

const TIMESTAMPS = new Set(['createtimestamp', 'modifytimestamp'])

export function layoutOf(ctx: AuthContext): Layout {
  return layoutOfBase(ctx.config().ldap.baseDN)
}

/** Where a normalized DN points in the directory. */
export type Target =
  | { kind: 'root' }
  | { kind: 'base' | 'people' | 'groups' }
  | { kind: 'person'; uid: string }
  | { kind: 'group'; name: string }
  | { kind: 'none' }

export function locate(layout: Layout, dn: string): Target {
  const rdns = parseDn(dn)
  if (rdns.length === 0) return { kind: 'root' }
  const n = normalizeRdns(rdns)
  if (n === layout.nbase) return { kind: 'base' }
  if (n === layout.npeople) return { kind: 'people' }
  if (n === layout.ngroups) return { kind: 'groups' }
  const first = rdns[0] as Rdn
  if (first.multi) return { kind: 'none' } // people and groups are named by one pair
  const parent = normalizeRdns(rdns.slice(1))
  const attribute = first.attribute.toLowerCase()
  if (parent === layout.npeople && attribute === 'uid') return { kind: 'person', uid: first.value.toLowerCase() }
  if (parent === layout.ngroups && attribute === 'cn') return { kind: 'group', name: first.value }
  return { kind: 'none' }
}

/** The values a filter requires of an attribute: equalities, alone or in a top-level `and` (each must hold). */
function requiredValues(filter: Filter, attribute: string, into: string[] = []): string[] {
  if (filter.kind === 'equal' && canonical(filter.attribute) === attribute) into.push(filter.value)
  if (filter.kind === 'and') for (const clause of filter.of) requiredValues(clause, attribute, into)
  return into
}

const PERSON_CLASSES = new Set(['top', 'person', 'organizationalperson', 'inetorgperson'])
const GROUP_CLASSES = new Set(['top', 'groupofnames', 'groupofuniquenames'])

/** A group's entryUUID, computed once per index. */
function groupUUID(group: IndexedGroup): string {
  group.uuid ??= entryUUID(`group:${group.name}`)
  return group.uuid
}

/** A person's objectClass values. */
const PERSON_CLASS_VALUES = ['top', 'person', 'organizationalPerson', 'inetOrgPerson']

/**
 * The name attributes of a person, from their one name field: cn and displayName are the name
 * (else the uid), sn its last word (else the uid), givenName its first word when there are two or
 * more (else none). The one rule both the entry (`personAttributes`) and its direct encoding
 * (`personParts`) follow.
 */
function personNames(person: IndexedPerson): { cn: string; sn: string; givenName: string | null } {
  const words = person.name.trim().split(/\s+/).filter(Boolean)
  return { cn: commonNameOf(person), sn: words.at(-1) ?? person.uid, givenName: words.length >= 2 ? (words[0] as string) : null }
}

/** A person's cn and displayName (`personNames`' cn), without splitting the name into words (a sync asks for cn, not sn). */
const commonNameOf = (person: IndexedPerson): string => person.name.trim() || person.uid

type PersonNames = ReturnType<typeof personNames>

/**
 * A person's attributes in entry order, by canonical name, each made from the person and their
 * names (or absent: null): the one list behind the whole entry (`personAttributes`) and one
 * attribute of it (`personAttribute`, what a filter or a compare reads: `(uid=…)` builds the uid
 * alone, not the entry).
 */
const PERSON_ATTRIBUTES: ReadonlyArray<readonly [string, (person: IndexedPerson, names: () => PersonNames) => Attribute | null]> = [
  ['objectclass', () => ({ name: 'objectClass', values: [...PERSON_CLASS_VALUES] })],
  ['uid', (person) => ({ name: 'uid', values: [person.uid] })],
  ['cn', (person) => ({ name: 'cn', values: [commonNameOf(person)] })],
  ['displayname', (person) => ({ name: 'displayName', values: [commonNameOf(person)] })],
  ['sn', (_, names) => ({ name: 'sn', values: [names().sn] })],
  ['givenname', (_, names) => (names().givenName === null ? null : { name: 'givenName', values: [names().givenName as string] })],
  ['mail', (person) => ({ name: 'mail', values: [person.email] })],
  ['memberof', (person) => (person.groups.length > 0 ? { name: 'memberOf', values: memberOfValues(person.groups), dn: true } : null)],
  // The operational ones cost a hash and two formatted times: made only when read (a sync asking
  // for uid, cn, mail and memberOf never reads them).
  ['entryuuid', (person) => lazyAttribute('entryUUID', () => (person.uuid ??= entryUUID(person.id)))],
  ['createtimestamp', (person) => lazyAttribute('createTimestamp', () => generalizedTime(new Date(person.createdAt)))],
  ['modifytimestamp', (person) => lazyAttribute('modifyTimestamp', () => generalizedTime(new Date(person.updatedAt)))],
]
const PERSON_ATTRIBUTE = new Map(PERSON_ATTRIBUTES)

/** A person's attributes: the same for every viewer (who may see the person is the snapshot's rule). */
function personAttributes(person: IndexedPerson): Attribute[] {
  let names: PersonNames | undefined
  const namesOf = () => (names ??= personNames(person))
  const attributes: Attribute[] = []
  for (const [, make] of PERSON_ATTRIBUTES) {
    const attribute = make(person, namesOf)
    if (attribute) attributes.push(attribute)
  }
  return attributes
}

/** One attribute of a person's entry by its canonical name (`personAttributes`' for that name), or undefined. */
function personAttribute(person: IndexedPerson, name: string): Attribute | undefined {
  const make = PERSON_ATTRIBUTE.get(name)
  if (!make) return undefined
  let names: PersonNames | undefined
  return make(person, () => (names ??= personNames(person))) ?? undefined
}

/** An operational attribute of one value, made when its values are first read. */
function lazyAttribute(name: string, make: () => string): Attribute {
  let values: string[] | null = null
  return {
    name,
    get values() {
      values ??= [make()]
      return values
    },
    operational: true,
  }
}

/** A person's entry, its attributes built only when read (a sync's encoding needs none: `writeSelected`). */
export class PersonEntry implements Entry {
  readonly dn: string
  readonly ndn: string
  private built: Attribute[] | null = null

  constructor(readonly person: IndexedPerson) {
    this.dn = person.dn
    this.ndn = person.ndn
  }

  get attributes(): Attribute[] {
    this.built ??= personAttributes(this.person)
    return this.built
  }

  attribute(name: string): Attribute | undefined {
    if (this.built) return this.built.find((a) => canonical(a.name) === name)
    return personAttribute(this.person, name)
  }
}

/** Whether a filter reads nothing but objectClass (and so answers alike for every person: they share their classes). */
function classOnly(filter: Filter): boolean {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return filter.of.every(classOnly)
    case 'not':
      return classOnly(filter.of)
    case 'undefined':
      return true
    default:
      return canonical(filter.attribute) === 'objectclass'
  }
}

/** A segment of a search's candidates, in directory order: fixed entries, people, or groups. */
type Segment =
  | { kind: 'fixed'; entries: Entry[] }
  | { kind: 'people'; list: readonly IndexedPerson[] }
  | { kind: 'groups'; list: readonly IndexedGroup[] }

const segmentLength = (segment: Segment): number => (segment.kind === 'fixed' ? segment.entries.length : segment.list.length)

/** A person's groups sorted in group order, and their DNs (memberOf), per shared list of groups (directory-index.ts shares one per distinct set of sources). */
const groupOrders = new WeakMap<readonly IndexedGroup[], readonly IndexedGroup[]>()
const groupDns = new WeakMap<readonly IndexedGroup[], string[]>()

/** Sorted in group order (a person's groups come in the group rule's order). */
function inGroupOrder(groups: readonly IndexedGroup[]): readonly IndexedGroup[] {
  let sorted = groupOrders.get(groups)
  if (!sorted) {
    sorted = [...groups].sort((a, b) =>
      a.lower !== b.lower ? (a.lower < b.lower ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )
    groupOrders.set(groups, sorted)
  }
  return sorted
}

/** The DNs of a person's groups, in the group rule's order (shared: never mutated). */
function memberOfValues(groups: readonly IndexedGroup[]): string[] {
  let dns = groupDns.get(groups)
  if (!dns) {
    dns = groups.map((g) => g.dn)
    groupDns.set(groups, dns)
  }
  return dns
}

/**
 * One operation's view of the directory, as this viewer may see it: the in-memory index
 * (directory-index.ts) as of the operation's start, the admission rule (bans, verification) applied now.
 */
export class Snapshot {
  private index: DirectoryIndex | null = null
  private lastPersonAt: { dn: string; person: IndexedPerson | null } | null = null
  readonly layout: Layout
  /** Kept for callers that set it: entries are built per search, `memberOf` comes from the index at no cost. */
  withMemberOf = true

  constructor(
    private readonly ctx: AuthContext,
    readonly viewer: Viewer,
  ) {
    this.layout = layoutOf(ctx)
  }

  private async load(): Promise<DirectoryIndex> {
    this.index ??= await indexesOf(this.ctx).current()
    return this.index
  }

  /** The index, with its mail and cn maps built when the filter narrows people by mail or cn. */
  private async loadFor(filter: Filter): Promise<DirectoryIndex> {
    const index = await this.load()
    if (!index.namesReady && (requiredValues(filter, 'mail').length > 0 || requiredValues(filter, 'cn').length > 0))
      await index.namesBuilt(new TimeSlices(indexesOf(this.ctx).clock))
    return index
  }

  private shown(person: IndexedPerson): boolean {
    return shownNow(this.ctx, person)
  }

  /** The bound person's own indexed entry (shown now), or null. */
  private self(index: DirectoryIndex): IndexedPerson | null {
    const user = this.viewer.user
    if (!user) return null
    const self = index.entryOf(user)
    return self && this.shown(self) ? self : null
  }

  /** The person a (normalized or not) DN names, if indexed (remembered for the operation: a filter's member value is asked of each group). */
  private personAt(index: DirectoryIndex, dn: string): IndexedPerson | null {
    if (this.lastPersonAt?.dn === dn) return this.lastPersonAt.person
    let target: Target
    try {
      target = locate(this.layout, dn)
    } catch {
      return null
    }
    const person = target.kind === 'person' ? (index.byUid.get(target.uid) ?? null) : null
    this.lastPersonAt = { dn, person }
    return person
  }

  /** The people a search may return, in directory order, narrowed by the equalities its filter requires. */
  private peopleCandidates(index: DirectoryIndex, filter: Filter): readonly IndexedPerson[] {
    if (!this.viewer.user) return []
    if (!this.viewer.everything) {
      const self = this.self(index)
      return self ? [self] : []
    }
    let best: readonly IndexedPerson[] = index.people
    const narrow = (list: readonly IndexedPerson[]) => {
      if (list.length < best.length) best = list
    }
    for (const value of requiredValues(filter, 'objectclass')) if (!PERSON_CLASSES.has(value.toLowerCase())) return []
    if (requiredValues(filter, 'member').length > 0 || requiredValues(filter, 'uniquemember').length > 0) return []
    for (const value of requiredValues(filter, 'uid')) {
      const found = index.byUid.get(value.toLowerCase())
      narrow(found ? [found] : [])
    }
    // Filled for this filter by `loadFor`; without them the filter alone judges every person.
    if (index.namesReady) {
      for (const value of requiredValues(filter, 'mail')) narrow(Index.lookup(index.byMail, value.toLowerCase()))
      for (const value of requiredValues(filter, 'cn')) narrow(Index.lookup(index.byCn, value.toLowerCase()))
    }
    for (const value of requiredValues(filter, 'memberof')) {
      const group = this.groupAt(index, value)
      if (group !== undefined) narrow(group?.members ?? [])
    }
    return best
  }

  /** The group a DN names: the group, null when it names none, undefined when it is no DN (not narrowed). */
  private groupAt(index: DirectoryIndex, dn: string): IndexedGroup | null | undefined {
    let target: Target
    try {
      target = locate(this.layout, dn)
    } catch {
      return undefined
    }
    return target.kind === 'group' ? (index.groupByName.get(target.name.toLowerCase()) ?? null) : null
  }

  /** The groups a search may return, in group order, narrowed by the equalities its filter requires. */
  private groupCandidates(index: DirectoryIndex, filter: Filter): readonly IndexedGroup[] {
    if (!this.viewer.user) return []
    for (const value of requiredValues(filter, 'objectclass')) if (!GROUP_CLASSES.has(value.toLowerCase())) return []
    for (const attribute of ['uid', 'mail', 'memberof']) if (requiredValues(filter, attribute).length > 0) return []
    let best: readonly IndexedGroup[] | null = null
    const narrow = (list: readonly IndexedGroup[]) => {
      if (best === null || list.length < best.length) best = list
    }
    if (!this.viewer.everything) {
      const self = this.self(index)
      narrow(self ? inGroupOrder(self.groups) : [])
    }
    for (const value of [...requiredValues(filter, 'member'), ...requiredValues(filter, 'uniquemember')]) {
      const person = this.personAt(index, value)
      // A person's own groups: the cost of the search is theirs, not the directory's.
      narrow(person && this.shown(person) ? inGroupOrder(person.groups) : [])
    }
    for (const value of requiredValues(filter, 'cn')) {
      const group = index.groupByName.get(value.toLowerCase())
      narrow(group ? [group] : [])
    }
    return best ?? index.groups
  }

  /** The members of a group this viewer sees (a group exists while one of them is there). */
  private membersOf(group: IndexedGroup, index: DirectoryIndex): IndexedPerson[] {
    if (this.viewer.everything) return group.members.filter((m) => this.shown(m))
    const self = this.self(index)
    return self?.groups.includes(group) ? [self] : []
  }

  private groupShown(group: IndexedGroup, index: DirectoryIndex): boolean {
    if (this.viewer.everything) return group.members.some((m) => this.shown(m))
    const self = this.self(index)
    return !!self && self.groups.includes(group)
  }

  /** A person's entry (null when not shown now); its attributes are built when first read. */
  personEntry(person: IndexedPerson): Entry | null {
    if (!this.shown(person)) return null
    return new PersonEntry(person)
  }

  /** A group's entry (null when no member is shown to this viewer); its members are listed only when read. */
  groupEntry(group: IndexedGroup, index: DirectoryIndex): Entry | null {
    if (!this.groupShown(group, index)) return null
    let members: IndexedPerson[] | null = null
    const list = () => (members ??= this.membersOf(group, index))
    let dns: string[] | null = null
    const memberAttribute = (name: string): Attribute => ({
      name,
      get values() {
        dns ??= list().map((m) => m.dn)
        return dns
      },
      dn: true,
      // An equality on a member costs one lookup, not a walk through every member's DN.
      has: (ndn: string) => {
        const person = this.personAt(index, ndn)
        return (
          !!person &&
          person.ndn === ndn &&
          person.groups.includes(group) &&
          (this.viewer.everything ? this.shown(person) : person === this.self(index))
        )
      },
    })
    return {
      dn: group.dn,
      ndn: group.ndn,
      attributes: [
        { name: 'objectClass', values: ['top', 'groupOfNames', 'groupOfUniqueNames'] },
        { name: 'cn', values: [group.name] },
        memberAttribute('member'),
        memberAttribute('uniqueMember'),
        { name: 'entryUUID', values: [groupUUID(group)], operational: true },
      ],
    }
  }

  baseEntry(): Entry {
    const first = this.layout.baseRdns[0] as Rdn
    const attribute = first.attribute.toLowerCase()
    const objectClass = attribute === 'dc' ? 'domain' : attribute === 'o' ? 'organization' : 'organizationalUnit'
    return {
      dn: this.layout.base,
      ndn: this.layout.nbase,
      attributes: [
        { name: 'objectClass', values: ['top', objectClass] },
        { name: first.attribute, values: [first.value] },
      ],
    }
  }

  unitEntry(ou: 'people' | 'groups'): Entry {
    const dn = ou === 'people' ? this.layout.people : this.layout.groups
    return {
      dn,
      ndn: ou === 'people' ? this.layout.npeople : this.layout.ngroups,
      attributes: [
        { name: 'objectClass', values: ['top', 'organizationalUnit'] },
        { name: 'ou', values: [ou] },
      ],
    }
  }

  rootDSE(tls: boolean): Entry {
    return {
      dn: '',
      ndn: '',
      attributes: [
        { name: 'objectClass', values: ['top'] },
        { name: 'namingContexts', values: [this.layout.base] },
        { name: 'supportedLDAPVersion', values: ['3'] },
        { name: 'supportedExtension', values: [OID.whoami, OID.passwordModify, ...(tls ? [OID.startTLS] : [])] },
        { name: 'supportedControl', values: [OID.pagedResults] },
        { name: 'vendorName', values: ['Gatehouse'] },
      ],
    }
  }

  /**
   * The candidates in scope of `base` this viewer may see, in directory order (the filter is the
   * cursor's, per candidate); null when the base itself is not there for them (noSuchObject).
   */
  async segments(base: Target, scope: Scope, filter: Filter, tls: boolean): Promise<Segment[] | null> {
    // The subtree without its base: a subtree search starts with the base whenever it has anything.
    if (scope === 'children') {
      const sub = await this.segments(base, 'sub', filter, tls)
      if (!sub || base.kind === 'root') return sub
      const [first, ...rest] = sub
      if (!first) return rest
      if (first.kind === 'fixed') return [{ kind: 'fixed', entries: first.entries.slice(1) }, ...rest]
      return [
        first.kind === 'people' ? { kind: 'people', list: first.list.slice(1) } : { kind: 'groups', list: first.list.slice(1) },
        ...rest,
      ]
    }
    const anonymous = !this.viewer.user
    switch (base.kind) {
      case 'root':
        return scope === 'base' ? [{ kind: 'fixed', entries: [this.rootDSE(tls)] }] : []
      case 'base': {
        if (scope === 'base' || anonymous) return scope === 'one' ? [] : [{ kind: 'fixed', entries: [this.baseEntry()] }]
        const people = this.unitEntry('people')
        const groups = this.unitEntry('groups')
        if (scope === 'one') return [{ kind: 'fixed', entries: [people, groups] }]
        const index = await this.loadFor(filter)
        return [
          { kind: 'fixed', entries: [this.baseEntry(), people] },
          { kind: 'people', list: this.peopleCandidates(index, filter) },
          { kind: 'fixed', entries: [groups] },
          { kind: 'groups', list: this.groupCandidates(index, filter) },
        ]
      }
      case 'people':
      case 'groups': {
        if (anonymous) return null
        const unit: Segment = { kind: 'fixed', entries: [this.unitEntry(base.kind)] }
        if (scope === 'base') return [unit]
        const index = await this.loadFor(filter)
        const below: Segment =
          base.kind === 'people'
            ? { kind: 'people', list: this.peopleCandidates(index, filter) }
            : { kind: 'groups', list: this.groupCandidates(index, filter) }
        return scope === 'one' ? [below] : [unit, below]
      }
      case 'person': {
        if (anonymous) return null
        const index = await this.load()
        const person = index.byUid.get(base.uid)
        const visible = person && this.shown(person) && (this.viewer.everything || person === this.self(index))
        if (!visible) return null
        return scope === 'one' ? [] : [{ kind: 'people', list: [person] }]
      }
      case 'group': {
        if (anonymous) return null
        const index = await this.load()
        const group = index.groupByName.get(base.name.toLowerCase())
        if (!group || !this.groupShown(group, index)) return null
        return scope === 'one' ? [] : [{ kind: 'groups', list: [group] }]
      }
      default:
        return null
    }
  }

  /** A cursor over the entries of `segments` that match `filter`. */
  cursor(segments: Segment[], filter: Filter): SearchCursor {
    return new SearchCursor(segments, filter, (segment, at) => {
      if (segment.kind === 'fixed') return segment.entries[at] ?? null
      if (segment.kind === 'people') return this.personEntry(segment.list[at] as IndexedPerson)
      return this.groupEntry(segment.list[at] as IndexedGroup, this.index as DirectoryIndex)
    })
  }

  /** The entries in scope, filtered, all at once (the panel's test box and Compare: small answers). */
  async inScope(base: Target, scope: Scope, filter: Filter, tls: boolean): Promise<Entry[] | null> {
    const segments = await this.segments(base, scope, filter, tls)
    if (!segments) return null
    return this.cursor(segments, { kind: 'present', attribute: 'objectclass' }).take(Number.POSITIVE_INFINITY)
  }
}

/** Candidates examined between two yields to the event loop (a few milliseconds of work). */
const SLICE = 256

/**
 * A search's matching entries, produced on demand in directory order: `take` builds, filters and
 * hands out up to so many entries, yielding to the event loop every SLICE candidates, so a search
 * through a hundred thousand people never holds other connections or HTTP for more than a few
 * milliseconds. Its position is a cookie (the key of the next candidate: a person's creation time
 * and id, a group's name), so the next page starts there by a binary search: a page costs the same
 * wherever it sits in the result, and a person added or removed between pages moves nobody else.
 */
export class SearchCursor {
  private seg = 0
  private at = 0
  /** A matching entry found by `more()`, at the current position, not yet handed out. */
  private pending: Entry | null = null
  /** The filter reads only objectClass: its verdict on one person is every person's (null: not known yet). */
  private readonly sameForPeople: boolean
  private peopleVerdict: boolean | null = null

  constructor(
    private readonly segments: Segment[],
    private readonly filter: Filter,
    private readonly build: (segment: Segment, at: number) => Entry | null,
  ) {
    this.sameForPeople = classOnly(filter)
  }

  private matches(segment: Segment, entry: Entry): boolean {
    if (segment.kind !== 'people' || !this.sameForPeople) return matches(entry, this.filter)
    this.peopleVerdict ??= matches(entry, this.filter)
    return this.peopleVerdict
  }

  /** The next matching entry at or after the position (left there, not handed out), or null at the end. */
  private async find(): Promise<Entry | null> {
    if (this.pending) return this.pending
    let examined = 0
    while (this.seg < this.segments.length) {
      const segment = this.segments[this.seg] as Segment
      if (this.at >= segmentLength(segment)) {
        this.seg++
        this.at = 0
        continue
      }
      if (++examined % SLICE === 0) await yieldToLoop()
      const entry = this.build(segment, this.at)
      if (entry && this.matches(segment, entry)) {
        this.pending = entry
        return entry
      }
      this.at++
    }
    return null
  }

  /** Up to `max` matching entries from the position on (fewer at the end). */
  async take(max: number): Promise<Entry[]> {
    const out: Entry[] = []
    while (out.length < max) {
      const entry = await this.find()
      if (!entry) break
      out.push(entry)
      this.pending = null
      this.at++
    }
    return out
  }

  /** Whether another matching entry follows (found now, handed out by the next `take`). */
  async more(): Promise<boolean> {
    return (await this.find()) !== null
  }

  /** The position as a paged-results cookie: the segment and the key of the next candidate. */
  cookie(): Buffer {
    const segment = this.segments[this.seg]
    if (!segment) return Buffer.alloc(0)
    let key: string
    if (segment.kind === 'fixed') key = `f:${this.at}`
    else if (segment.kind === 'people') {
      const person = segment.list[this.at] as IndexedPerson
      key = `p:${person.createdAt}:${person.id}`
    } else key = `g:${(segment.list[this.at] as IndexedGroup).name}`
    return Buffer.from(`${this.seg}:${key}`, 'utf8')
  }

  /** Moves to a cookie's position; false (and at the end) when it is none of this search's. */
  seek(cookie: Buffer): boolean {
    this.pending = null
    const text = cookie.toString('utf8')
    const m = /^(\d{1,4}):([fpg]):([\s\S]*)$/.exec(text)
    const segment = m ? this.segments[Number(m[1])] : undefined
    this.seg = this.segments.length
    this.at = 0
    if (!m || !segment) return false
    const [, seg, kind, rest] = m as unknown as [string, string, string, string]
    if (kind === 'f' && segment.kind === 'fixed' && /^\d{1,4}$/.test(rest)) {
      this.at = Number(rest)
    } else if (kind === 'p' && segment.kind === 'people') {
      const p = /^(-?\d{1,16}):([\s\S]*)$/.exec(rest)
      if (!p) return false
      this.at = Index.seekPerson(segment.list, Number(p[1]), p[2] as string)
    } else if (kind === 'g' && segment.kind === 'groups') {
      this.at = Index.seekGroup(segment.list, rest.toLowerCase(), rest)
    } else return false
    this.seg = Number(seg)
    return true
  }
}

function attributeOf(entry: Entry, name: string): Attribute | undefined {
  const wanted = canonical(name)
  if (entry.attribute) return entry.attribute(wanted)
  return entry.attributes.find((a) => canonical(a.name) === wanted)
}

function normalizedValue(attribute: Attribute, value: string): string {
  if (attribute.dn) {
    try {
      return normalizeDn(value)
    } catch {
      return value.toLowerCase()
    }
  }
  return value.toLowerCase()
}

function compareOrdered(attribute: Attribute, stored: string, asserted: string): number {
  if (TIMESTAMPS.has(attribute.name.toLowerCase())) {
    const a = parseGeneralizedTime(stored)
    const b = parseGeneralizedTime(asserted)
    if (Number.isNaN(b)) return Number.NaN
    return a - b
  }
  const a = stored.toLowerCase()
  const b = asserted.toLowerCase()
  return a < b ? -1 : a > b ? 1 : 0
}

/** Whether a search needs `memberOf`: it returns user attributes (none named, `*`) or names it, or its filter does. */
export function wantsMemberOf(attributes: string[], filter: Filter): boolean {
  const named = attributes.map((a) => a.toLowerCase())
  if (named.length === 0 || named.includes('*') || named.includes('memberof')) return true
  const mentions = (f: Filter): boolean => {
    switch (f.kind) {
      case 'and':
      case 'or':
        return f.of.some(mentions)
      case 'not':
        return mentions(f.of)
      case 'undefined':
        return false
      default:
        return canonical(f.attribute) === 'memberof'
    }
  }
  return mentions(filter)
}

/** Whether `entry` matches `filter` (RFC 4511 §4.5.1.7; Undefined counts as no match, `not` of Undefined too). */
export function matches(entry: Entry, filter: Filter): boolean {
  return evaluate(entry, filter) === true
}

function evaluate(entry: Entry, filter: Filter): boolean | undefined {
  switch (filter.kind) {
    case 'and': {
      let result: boolean | undefined = true
      for (const clause of filter.of) {
        const r = evaluate(entry, clause)
        if (r === false) return false
        if (r === undefined) result = undefined
      }
      return result
    }
    case 'or': {
      let result: boolean | undefined = false
      for (const clause of filter.of) {
        const r = evaluate(entry, clause)
        if (r === true) return true
        if (r === undefined) result = undefined
      }
      return result
    }
    case 'not': {
      const r = evaluate(entry, filter.of)
      return r === undefined ? undefined : !r
    }
    case 'present':
      return filter.attribute === 'objectclass' || attributeOf(entry, filter.attribute) !== undefined
    case 'undefined':
      return undefined
    default:
      break
  }
  const attribute = attributeOf(entry, filter.attribute)
  // Undefined whatever the entry (RFC 4511 §4.5.1.7): an attribute description the directory does
  // not recognize (one an entry carries is: the base's naming attribute), an assertion value the
  // matching rule cannot read (a timestamp's that is no generalized time).
  if (!attribute && !recognized(filter.attribute)) return undefined
  const time = TIMESTAMPS.has(canonical(filter.attribute)) && filter.kind !== 'substrings'
  if (time && Number.isNaN(parseGeneralizedTime(filter.value))) return undefined
  if (!attribute) return false
  switch (filter.kind) {
    case 'equal':
    case 'approx': {
      // generalizedTimeMatch: the same instant, however written.
      if (time) return attribute.values.some((v) => compareOrdered(attribute, v, filter.value) === 0)
      const asserted = normalizedValue(attribute, filter.value)
      if (attribute.has) return attribute.has(asserted)
      return attribute.values.some((v) => normalizedValue(attribute, v) === asserted)
    }
    case 'greater':
    case 'less': {
      let undefinedSeen = false
      for (const v of attribute.values) {
        const c = compareOrdered(attribute, v, filter.value)
        if (Number.isNaN(c)) undefinedSeen = true
        else if (filter.kind === 'greater' ? c >= 0 : c <= 0) return true
      }
      return undefinedSeen ? undefined : false
    }
    case 'substrings': {
      const initial = filter.initial?.toLowerCase() ?? null
      const final = filter.final?.toLowerCase() ?? null
      const any = filter.any.map((s) => s.toLowerCase())
      return attribute.values.some((raw) => {
        const v = raw.toLowerCase()
        let at = 0
        if (initial !== null) {
          if (!v.startsWith(initial)) return false
          at = initial.length
        }
        for (const part of any) {
          const found = v.indexOf(part, at)
          if (found < 0) return false
          at = found + part.length
        }
        if (final !== null) return v.length - at >= final.length && v.endsWith(final)
        return true
      })
    }
  }
}

/** The attributes of `entry` a search asked for (`*` user attributes, `+` operational, `1.1` none, or names). */
export function selectAttributes(entry: Entry, requested: string[]): AnswerEntry {
  const { all, operational, named } = selectionOf(requested)
  const root = entry.dn === ''
  return {
    dn: entry.dn,
    attributes: entry.attributes
      .filter((a) => {
        const name = canonical(a.name)
        if (named.has(name)) return true
        if (a.operational || root) return operational || (root && all)
        return all
      })
      .map((a) => ({ name: a.name, values: a.values })),
  }
}

interface Selection {
  /** `*` or nothing asked: every user attribute. */
  all: boolean
  /** `+`: every operational attribute. */
  operational: boolean
  /** The attributes asked by name, canonical. */
  named: Set<string>
}

/**
 * What a search's requested attributes select, worked out once per list of names: the last list
 * asked about is recognized by identity (a search passes the same array for each of its entries),
 * another one by its names (each request decodes a new array: a lookup by uid worked them out
 * again at every operation). Bounded: a client's odd lists start the map over.
 */
let lastRequested: string[] | null = null
let lastSelection: Selection | null = null
const selectionsByNames = new Map<string, Selection>()
function selectionOf(requested: string[]): Selection {
  if (requested === lastRequested) return lastSelection as Selection
  const names = requested.join('\0')
  let found = selectionsByNames.get(names)
  if (!found) {
    const wanted = requested.map((r) => r.toLowerCase())
    found = {
      all: wanted.length === 0 || wanted.includes('*'),
      operational: wanted.includes('+'),
      named: new Set(wanted.filter((w) => w !== '*' && w !== '+' && w !== '1.1').map(canonical)),
    }
    if (selectionsByNames.size >= 1_000) selectionsByNames.clear()
    selectionsByNames.set(names, found)
  }
  lastRequested = requested
  lastSelection = found
  return found
}

/**
 * Appends to `writer` the searchResultEntry of the attributes of `entry` a search asked for: a
 * person's straight from the index's record (`personParts`), another entry's as selected.
 */
export function writeSelected(writer: EntryWriter, entry: Entry, requested: string[], typesOnly: boolean): void {
  const person = entry.person
  if (person) writer.entry(person.dn, personParts(person, requested, typesOnly), typesOnly)
  else {
    const selected = selectAttributes(entry, requested)
    writer.entry(selected.dn, selected.attributes, typesOnly)
  }
}

/** A person's objectClass, encoded once (with values, types only). */
const personClass = [encodeAttribute('objectClass', PERSON_CLASS_VALUES, false), encodeAttribute('objectClass', PERSON_CLASS_VALUES, true)]
/** memberOf encoded once per shared list of groups (with values, types only). */
const memberOfEncoded = [new WeakMap<readonly IndexedGroup[], Buffer>(), new WeakMap<readonly IndexedGroup[], Buffer>()]

/**
 * A person's attributes as a search selects them, straight from the index's record: what
 * `selectAttributes(personEntry, requested)` answers (personAttributes' attributes, in its order),
 * without building the entry's attributes, objectClass and memberOf as encodings shared by
 * everyone with the same groups (`encodeAttribute`, copied into each entry).
 */
function personParts(person: IndexedPerson, requested: string[], typesOnly: boolean): AnswerAttribute[] {
  // No closure here: one per person is a cost at a hundred thousand (and a bundle keeping names wraps each).
  const { all, operational, named } = selectionOf(requested)
  const parts: AnswerAttribute[] = []
  if (all || named.has('objectclass')) parts.push(personClass[typesOnly ? 1 : 0] as Buffer)
  if (all || named.has('uid')) parts.push({ name: 'uid', values: [person.uid] })
  if (all || named.has('cn')) parts.push({ name: 'cn', values: [commonNameOf(person)] })
  if (all || named.has('displayname')) parts.push({ name: 'displayName', values: [commonNameOf(person)] })
  if (all || named.has('sn') || named.has('givenname')) {
    const names = personNames(person)
    if (all || named.has('sn')) parts.push({ name: 'sn', values: [names.sn] })
    if (names.givenName !== null && (all || named.has('givenname'))) parts.push({ name: 'givenName', values: [names.givenName] })
  }
  if (all || named.has('mail')) parts.push({ name: 'mail', values: [person.email] })
  if (person.groups.length > 0 && (all || named.has('memberof'))) {
    const kept = memberOfEncoded[typesOnly ? 1 : 0] as WeakMap<readonly IndexedGroup[], Buffer>
    let memberOf = kept.get(person.groups)
    if (!memberOf) {
      memberOf = encodeAttribute('memberOf', memberOfValues(person.groups), typesOnly)
      kept.set(person.groups, memberOf)
    }
    parts.push(memberOf)
  }
  if (operational || named.has('entryuuid')) {
    person.uuid ??= entryUUID(person.id)
    parts.push({ name: 'entryUUID', values: [person.uuid] })
  }
  if (operational || named.has('createtimestamp'))
    parts.push({ name: 'createTimestamp', values: [generalizedTime(new Date(person.createdAt))] })
  if (operational || named.has('modifytimestamp'))
    parts.push({ name: 'modifyTimestamp', values: [generalizedTime(new Date(person.updatedAt))] })
  return parts
}

/**
 * The matched DN of a `dn` that names nothing here (RFC 4511 §4.1.9): the last entry on the way
 * to it that this viewer sees (a unit when bound, else the base), or '' outside the tree.
 */
export function matchedDnOf(layout: Layout, viewer: Viewer, dn: string): string {
  let rdns: Rdn[]
  try {
    rdns = parseDn(dn)
  } catch (error) {
    if (error instanceof DnError) return ''
    throw error
  }
  for (let i = 1; i < rdns.length; i++) {
    const n = normalizeRdns(rdns.slice(i))
    if (viewer.user && n === layout.npeople) return layout.people
    if (viewer.user && n === layout.ngroups) return layout.groups
    if (n === layout.nbase) return layout.base
  }
  return ''
}

/** The visible entry at `dn`, or null. */
export async function entryAt(snapshot: Snapshot, dn: string, tls: boolean): Promise<Entry | null> {
  const target = locate(snapshot.layout, dn)
  const found = await snapshot.inScope(target, 'base', { kind: 'present', attribute: 'objectclass' }, tls)
  return found?.[0] ?? null
}

/** Compare (RFC 4511 §4.10): true, false, or undefined when the entry has no such attribute. */
export function compareValue(entry: Entry, attributeName: string, value: string): boolean | undefined {
  if (canonical(attributeName) === 'objectclass') {
    const wanted = value.toLowerCase()
    return (attributeOf(entry, 'objectclass')?.values ?? []).some((v) => v.toLowerCase() === wanted)
  }
  const attribute = attributeOf(entry, attributeName)
  if (!attribute) return undefined
  const asserted = normalizedValue(attribute, value)
  if (attribute.has) return attribute.has(asserted)
  return attribute.values.some((v) => normalizedValue(attribute, v) === asserted)
}

/**
 * A search as this viewer sees it: located and scoped, its candidates narrowed through the index,
 * and a cursor that filters and hands out its entries in slices (paging, size limit and attribute
 * selection are the caller's). A base that is no DN or names nothing answers its result code.
 */
export async function openSearch(
  ctx: AuthContext,
  viewer: Viewer,
  request: { base: string; scope: Scope; filter: Filter },
  tls: boolean,
): Promise<{ cursor: SearchCursor } | { code: number; matchedDN?: string }> {
  const snapshot = new Snapshot(ctx, viewer)
  let target: Target
  try {
    target = locate(snapshot.layout, request.base)
  } catch (error) {
    if (error instanceof DnError) return { code: ResultCode.invalidDNSyntax }
    throw error
  }
  const segments = await snapshot.segments(target, request.scope, request.filter, tls)
  if (!segments) return { code: ResultCode.noSuchObject, matchedDN: matchedDnOf(snapshot.layout, viewer, request.base) }
  return { cursor: snapshot.cursor(segments, request.filter) }
}

/**
 * A search's entries as this viewer sees them, all at once (the panel's test box; the listener
 * pages through `openSearch`'s cursor instead).
 */
export async function findEntries(
  ctx: AuthContext,
  viewer: Viewer,
  request: { base: string; scope: Scope; filter: Filter; attributes: string[] },
  tls: boolean,
): Promise<{ found: Entry[] } | { code: number; matchedDN?: string }> {
  const opened = await openSearch(ctx, viewer, request, tls)
  if ('code' in opened) return opened
  return { found: await opened.cursor.take(Number.POSITIVE_INFINITY) }
}
