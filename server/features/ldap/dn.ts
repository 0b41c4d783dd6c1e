/**
 * Distinguished names (RFC 4514) as this directory uses them: parsed into RDNs, compared in a
 * normalized form (attribute names and values lower-cased, as every attribute naming an entry
 * here — dc, ou, uid, cn — matches case-insensitively) and written with the escapes RFC 4514 asks.
 * (@ldapjs/dn 1.1 decodes `\+` followed by a hex digit as a hex pair, which breaks addresses such as
 * `a+b@x.lan`, so the few lines are ours.)
 */

export interface Rdn {
  attribute: string
  value: string
  /** A multi-valued RDN (`uid=a+cn=b`): only its first pair is kept, and it names no entry here. */
  multi?: true
}

export class DnError extends Error {}

function hex(c: string): boolean {
  return /^[0-9A-Fa-f]$/.test(c)
}

const ATTRIBUTE = /^([A-Za-z][A-Za-z0-9-]*|[0-9]+(\.[0-9]+)*)$/

/** The RDNs of `dn`, leftmost first; a multi-valued RDN (`a=1+b=2`) keeps its first pair, marked `multi`. Throws DnError. */
export function parseDn(dn: string): Rdn[] {
  const rdns: Rdn[] = []
  if (dn.trim() === '') return rdns
  // Without escapes or quotes (every DN a client binds or searches with, nearly): split and trim.
  if (!dn.includes('\\') && !dn.includes('"')) {
    for (const part of dn.split(/[,;]/)) {
      const eq = part.indexOf('=')
      const attribute = eq < 0 ? '' : part.slice(0, eq).trim()
      if (!ATTRIBUTE.test(attribute)) throw new DnError('invalid DN')
      let value = part.slice(eq + 1)
      const plus = value.indexOf('+')
      if (plus >= 0) {
        // Each further pair must be one (`uid=a+b@x` is no DN: an unescaped `+` separates pairs).
        for (const pair of value.slice(plus + 1).split('+')) {
          const at = pair.indexOf('=')
          if (at < 0 || !ATTRIBUTE.test(pair.slice(0, at).trim())) throw new DnError('invalid DN')
        }
        value = value.slice(0, plus)
      }
      value = value.replace(/^ +| +$/g, '')
      rdns.push(plus >= 0 ? { attribute, value, multi: true } : { attribute, value })
    }
    return rdns
  }
  let i = 0
  const n = dn.length
  while (i <= n) {
    while (i < n && dn[i] === ' ') i++
    let attribute = ''
    while (i < n && dn[i] !== '=') attribute += dn[i++]
    attribute = attribute.trim()
    if (i >= n || !ATTRIBUTE.test(attribute)) throw new DnError('invalid DN')
    i++ // '='
    while (i < n && dn[i] === ' ') i++
    const bytes: number[] = []
    let trailingSpaces = 0
    let first: Rdn | null = null
    for (;;) {
      const c = dn[i]
      if (c === undefined || c === ',' || c === ';' || c === '+') break
      if (c === '\\') {
        const a = dn[i + 1]
        const b = dn[i + 2]
        if (a !== undefined && b !== undefined && hex(a) && hex(b)) {
          bytes.push(Number.parseInt(a + b, 16))
          i += 3
        } else if (a !== undefined) {
          bytes.push(...Buffer.from(a, 'utf8'))
          i += 2
        } else throw new DnError('invalid DN escape')
        trailingSpaces = 0
        continue
      }
      if (c === '"') throw new DnError('quoted DN values are not supported')
      bytes.push(...Buffer.from(c, 'utf8'))
      trailingSpaces = c === ' ' ? trailingSpaces + 1 : 0
      i++
    }
    const value = Buffer.from(bytes.slice(0, bytes.length - trailingSpaces)).toString('utf8')
    first ??= dn[i] === '+' ? { attribute, value, multi: true } : { attribute, value }
    if (dn[i] === '+') {
      // The other pairs of a multi-valued RDN: skipped up to the next ','.
      while (i < n && dn[i] !== ',' && dn[i] !== ';') i += dn[i] === '\\' ? 2 : 1
    }
    rdns.push(first)
    if (i >= n) break
    i++ // ',' or ';'
  }
  return rdns
}

/** Whether a value needs any escape of `escapeDnValue` (most uids and names need none: one test, no copy). */
const NEEDS_ESCAPE = /[\\,+"<>;=\0]|^[ #]| $/

/** An attribute value escaped for a DN (RFC 4514 §2.4). */
export function escapeDnValue(value: string): string {
  if (!NEEDS_ESCAPE.test(value)) return value
  let out = value.replace(/[\\,+"<>;=]/g, (c) => `\\${c}`).replace(/\0/g, '\\00')
  if (out.startsWith(' ') || out.startsWith('#')) out = `\\${out}`
  // A lone space is escaped once, as the leading one, not again as the trailing one.
  if (out.endsWith(' ') && value.length > 1) out = `${out.slice(0, -1)}\\ `
  return out
}

export function formatDn(rdns: Rdn[]): string {
  return rdns.map((r) => `${r.attribute}=${escapeDnValue(r.value)}`).join(',')
}

/** The normalized form: names and values in lower case, escaped one way. */
export function normalizeRdns(rdns: Rdn[]): string {
  return rdns.map((r) => `${r.attribute.toLowerCase()}=${escapeDnValue(r.value.toLowerCase())}`).join(',')
}

/** `dn` normalized; throws DnError when it is not a DN. */
export function normalizeDn(dn: string): string {
  return normalizeRdns(parseDn(dn))
}

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
  /** A person's DN normalized (as normalizeDn(personDn(uid)) answers, without parsing it again). */
  personNdn(uid: string): string {
    return `uid=${escapeDnValue(uid.toLowerCase())},${this.npeople}`
  }
  groupDn(name: string): string {
    return `cn=${escapeDnValue(name)},${this.groups}`
  }
  /** A group's DN normalized (as normalizeDn(groupDn(name)) answers). */
  groupNdn(name: string): string {
    return `cn=${escapeDnValue(name.toLowerCase())},${this.ngroups}`
  }
}

const layouts = new Map<string, Layout>()
/** The layout of a base DN (kept: one per base DN ever configured). */
export function layoutOfBase(baseDN: string): Layout {
  let layout = layouts.get(baseDN)
  if (!layout) {
    layout = new Layout(baseDN)
    layouts.set(baseDN, layout)
  }
  return layout
}
