import { createHash } from 'node:crypto'
import { refusalNow } from '../../core/admission.js'
import type { AuthContext } from '../../core/context.js'
import type { UserRow } from '../../core/sessions.js'
import { splitRoles } from '../admin/access.js'
import { loginNameOf } from '../username/rules.js'
import { DnError, type Rdn, escapeDnValue, formatDn, normalizeDn, normalizeRdns, parseDn } from './dn.js'
import { type DirectoryReads, readsOf } from './reads.js'
import { type AnswerEntry, type Filter, OID, ResultCode, type Scope } from './wire.js'

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
  values: string[]
  /** Values are DNs (compared normalized). */
  dn?: boolean
  operational?: boolean
}

export interface Entry {
  dn: string
  /** The normalized DN. */
  ndn: string
  attributes: Attribute[]
}

const ALIASES: Record<string, string> = {
  commonname: 'cn',
  surname: 'sn',
  gn: 'givenname',
  userid: 'uid',
  rfc822mailbox: 'mail',
}

const canonical = (name: string): string => {
  const lower = name.toLowerCase()
  return ALIASES[lower] ?? lower
}

export function viewerOf(ctx: AuthContext, user: UserRow | null): Viewer {
  if (!user || refusalNow(ctx, user)) return { user: null, everything: false }
  const searchRoles = ctx.config().ldap.searchRoles
  return { user, everything: splitRoles(user.role, ctx.config()).some((role) => searchRoles.includes(role)) }
}

/** The uid of a user: the login name everyone shares (the username in lower case, else the email). */
export const uidOf = (user: UserRow): string => loginNameOf(user)

/** A stable UUID (version 5 layout, SHA-1 of a fixed namespace and the id) for `entryUUID`. */
export function entryUUID(userId: string): string {
  const hash = createHash('sha1').update('gatehouse-ldap-entryUUID\0').update(userId).digest()
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80
  const h = hash.subarray(0, 16).toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** Generalized time, UTC, whole seconds: 20260101120000Z. */
export function generalizedTime(date: Date): string {
  return `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`
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

/** The directory's fixed DNs for a base DN. */
export class Layout {
  readonly base: string
  readonly baseRdns: Rdn[]
  readonly nbase: string
  readonly people: string
  readonly npeople: string
  readonly groups: string
  readonly ngroups: string
  constructor(baseDN: string) {
    this.baseRdns = parseDn(baseDN)
    this.base = formatDn(this.baseRdns)
    this.nbase = normalizeRdns(this.baseRdns)
    this.people = `ou=people,${this.base}`
    this.npeople = `ou=people,${this.nbase}`
    this.groups = `ou=groups,${this.base}`
    this.ngroups = `ou=groups,${this.nbase}`
  }
  personDn(uid: string): string {
    return `uid=${escapeDnValue(uid)},${this.people}`
  }
  groupDn(name: string): string {
    return `cn=${escapeDnValue(name)},${this.groups}`
  }
}

const layouts = new Map<string, Layout>()
export function layoutOf(ctx: AuthContext): Layout {
  const baseDN = ctx.config().ldap.baseDN
  let layout = layouts.get(baseDN)
  if (!layout) {
    layout = new Layout(baseDN)
    layouts.set(baseDN, layout)
  }
  return layout
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

/** The uid and mail values a filter requires (an equality, alone or in a top-level `and`): the search reads those people only. */
function requiredValue(filter: Filter, attribute: string): string | null {
  if (filter.kind === 'equal' && canonical(filter.attribute) === attribute) return filter.value
  if (filter.kind === 'and') {
    for (const clause of filter.of) {
      const value = requiredValue(clause, attribute)
      if (value !== null) return value
    }
  }
  return null
}

/** One operation's view of the directory: people and groups, read once, as this viewer may see them. */
export class Snapshot {
  private people: UserRow[] | null = null
  private groupMembers: Map<string, UserRow[]> | null = null
  private readonly reads: DirectoryReads
  readonly layout: Layout
  /** Whether people entries carry `memberOf` (a search that neither returns nor filters on it skips the group rule's queries). */
  withMemberOf = true

  constructor(
    private readonly ctx: AuthContext,
    readonly viewer: Viewer,
  ) {
    this.layout = layoutOf(ctx)
    this.reads = readsOf(ctx)
  }

  private visible(rows: UserRow[]): UserRow[] {
    const self = this.viewer.user
    if (!self) return []
    return rows.filter((row) => !refusalNow(this.ctx, row) && (this.viewer.everything || row.id === self.id))
  }

  /** The people this viewer sees, narrowed to those a filter's required uid or mail names. */
  async listPeople(filter?: Filter): Promise<UserRow[]> {
    if (this.people) return this.people
    if (!this.viewer.user) return []
    const uid = filter ? requiredValue(filter, 'uid') : null
    if (uid !== null) {
      const found = await this.reads.byUid(uid)
      return this.visible(found ? [found] : [])
    }
    const mail = filter ? requiredValue(filter, 'mail') : null
    if (mail !== null) return this.visible(await this.reads.byMail(mail))
    if (!this.viewer.everything) return this.visible([this.viewer.user])
    this.people = this.visible(await this.reads.all())
    return this.people
  }

  async person(uid: string): Promise<UserRow | undefined> {
    const found = await this.reads.byUid(uid)
    return found ? this.visible([found])[0] : undefined
  }

  groupsOf(person: UserRow): Promise<string[]> {
    return this.reads.groupNames(person)
  }

  /** Group name → members this viewer sees (a group exists while someone visible is in it). */
  async groups(): Promise<Map<string, UserRow[]>> {
    if (this.groupMembers) return this.groupMembers
    const members = new Map<string, UserRow[]>()
    for (const person of await this.listPeople()) {
      for (const name of await this.groupsOf(person)) {
        let list = members.get(name)
        if (!list) {
          list = []
          members.set(name, list)
        }
        list.push(person)
      }
    }
    this.groupMembers = members
    return members
  }

  /** A person's entry: built once per row as read (and per `withMemberOf`), then shared until the database changes. */
  personEntry(person: UserRow): Promise<Entry> {
    return this.reads.cached(`entry:${person.id}:${this.withMemberOf ? 'memberOf' : ''}`, () => this.buildPersonEntry(person))
  }

  private async buildPersonEntry(person: UserRow): Promise<Entry> {
    const uid = uidOf(person)
    const dn = this.layout.personDn(uid)
    const name = person.name.trim()
    const words = name.split(/\s+/).filter(Boolean)
    const attributes: Attribute[] = [
      { name: 'objectClass', values: ['top', 'person', 'organizationalPerson', 'inetOrgPerson'] },
      { name: 'uid', values: [uid] },
      { name: 'cn', values: [name || uid] },
      { name: 'displayName', values: [name || uid] },
      { name: 'sn', values: [words.at(-1) ?? uid] },
    ]
    if (words.length >= 2) attributes.push({ name: 'givenName', values: [words[0] as string] })
    attributes.push({ name: 'mail', values: [person.email] })
    const groups = this.withMemberOf ? await this.groupsOf(person) : []
    if (groups.length > 0) attributes.push({ name: 'memberOf', values: groups.map((g) => this.layout.groupDn(g)), dn: true })
    attributes.push(
      { name: 'entryUUID', values: [entryUUID(person.id)], operational: true },
      { name: 'createTimestamp', values: [generalizedTime(person.createdAt)], operational: true },
      { name: 'modifyTimestamp', values: [generalizedTime(person.updatedAt)], operational: true },
    )
    return { dn, ndn: normalizeDn(dn), attributes }
  }

  groupEntry(name: string, members: UserRow[]): Entry {
    const dn = this.layout.groupDn(name)
    const memberDns = members.map((m) => this.layout.personDn(uidOf(m)))
    return {
      dn,
      ndn: normalizeDn(dn),
      attributes: [
        { name: 'objectClass', values: ['top', 'groupOfNames', 'groupOfUniqueNames'] },
        { name: 'cn', values: [name] },
        { name: 'member', values: memberDns, dn: true },
        { name: 'uniqueMember', values: memberDns, dn: true },
        { name: 'entryUUID', values: [entryUUID(`group:${name}`)], operational: true },
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
   * The entries in scope of `base` this viewer sees, in directory order; null when the base
   * itself is not there for them (noSuchObject).
   */
  async inScope(base: Target, scope: Scope, filter: Filter, tls: boolean): Promise<Entry[] | null> {
    // The subtree without its base: a subtree search starts with the base whenever it has anything.
    if (scope === 'children') return (await this.inScope(base, 'sub', filter, tls))?.slice(base.kind === 'root' ? 0 : 1) ?? null
    const anonymous = !this.viewer.user
    const peopleEntries = async () => Promise.all((await this.listPeople(filter)).map((p) => this.personEntry(p)))
    const groupEntries = async () => {
      // A filter that requires a uid or mail matches no group: the groups are not built.
      if (requiredValue(filter, 'uid') !== null || requiredValue(filter, 'mail') !== null) return []
      return [...(await this.groups())].map(([name, members]) => this.groupEntry(name, members))
    }
    switch (base.kind) {
      case 'root':
        return scope === 'base' ? [this.rootDSE(tls)] : []
      case 'base': {
        if (scope === 'base' || anonymous) return scope === 'one' ? [] : [this.baseEntry()]
        const units = [this.unitEntry('people'), this.unitEntry('groups')]
        if (scope === 'one') return units
        return [this.baseEntry(), units[0] as Entry, ...(await peopleEntries()), units[1] as Entry, ...(await groupEntries())]
      }
      case 'people':
      case 'groups': {
        if (anonymous) return null
        const unit = this.unitEntry(base.kind)
        if (scope === 'base') return [unit]
        const below = base.kind === 'people' ? await peopleEntries() : await groupEntries()
        return scope === 'one' ? below : [unit, ...below]
      }
      case 'person': {
        const person = await this.person(base.uid)
        if (!person) return null
        return scope === 'one' ? [] : [await this.personEntry(person)]
      }
      case 'group': {
        const wanted = base.name.toLowerCase()
        const found = [...(await this.groups())].find(([name]) => name.toLowerCase() === wanted)
        if (!found) return null
        return scope === 'one' ? [] : [this.groupEntry(found[0], found[1])]
      }
      default:
        return null
    }
  }
}

function attributeOf(entry: Entry, name: string): Attribute | undefined {
  const wanted = canonical(name)
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
  if (!attribute) return false
  switch (filter.kind) {
    case 'equal':
    case 'approx': {
      const asserted = normalizedValue(attribute, filter.value)
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
  const wanted = requested.map((r) => r.toLowerCase())
  const all = wanted.length === 0 || wanted.includes('*')
  const operational = wanted.includes('+')
  const named = new Set(wanted.filter((w) => w !== '*' && w !== '+' && w !== '1.1').map(canonical))
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
  return attribute.values.some((v) => normalizedValue(attribute, v) === asserted)
}

/**
 * A search's entries as this viewer sees them: located, scoped, filtered (paging, size limit and
 * attribute selection are the caller's). The listener (server.ts) and the panel's test box
 * (probe.ts) both answer through it. A base that is no DN or names nothing answers its result code.
 */
export async function findEntries(
  ctx: AuthContext,
  viewer: Viewer,
  request: { base: string; scope: Scope; filter: Filter; attributes: string[] },
  tls: boolean,
): Promise<{ found: Entry[] } | { code: number; matchedDN?: string }> {
  const snapshot = new Snapshot(ctx, viewer)
  snapshot.withMemberOf = wantsMemberOf(request.attributes, request.filter)
  let target: Target
  try {
    target = locate(snapshot.layout, request.base)
  } catch (error) {
    if (error instanceof DnError) return { code: ResultCode.invalidDNSyntax }
    throw error
  }
  const entries = await snapshot.inScope(target, request.scope, request.filter, tls)
  if (!entries) return { code: ResultCode.noSuchObject, matchedDN: matchedDnOf(snapshot.layout, viewer, request.base) }
  return { found: entries.filter((entry) => matches(entry, request.filter)) }
}
