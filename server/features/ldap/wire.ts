import { BerReader, BerWriter } from '@ldapjs/asn1'
import { type ParsedFilter, parseBer } from '@ldapjs/filter'

/**
 * The LDAPv3 wire (RFC 4511) for the subset this directory serves, on the @ldapjs codec packages:
 * frames are cut here (a definite length, at most `MAX_MESSAGE_BYTES`), requests are decoded with
 * @ldapjs/asn1's reader and @ldapjs/filter's filter parser, answers are written with its writer.
 * Anything malformed throws `WireError`: the connection is closed (server.ts), nothing else.
 */

/** The largest message a client may send when no other limit is given (1 MiB). */
export const MAX_MESSAGE_BYTES = 1024 * 1024

export class WireError extends Error {}

/**
 * What one message may cost (`ldap.limits`, config.ts), checked on the raw BER before anything is
 * decoded: a walk over tags and lengths only, no object made per item.
 */
export interface MessageLimits {
  maxFilterClauses: number
  maxFilterDepth: number
  maxValueBytes: number
}

export const DEFAULT_LIMITS: MessageLimits = { maxFilterClauses: 512, maxFilterDepth: 32, maxValueBytes: 16 * 1024 }

export const ResultCode = {
  success: 0,
  operationsError: 1,
  protocolError: 2,
  sizeLimitExceeded: 4,
  adminLimitExceeded: 11,
  compareFalse: 5,
  compareTrue: 6,
  authMethodNotSupported: 7,
  unavailableCriticalExtension: 12,
  confidentialityRequired: 13,
  noSuchAttribute: 16,
  constraintViolation: 19,
  noSuchObject: 32,
  invalidDNSyntax: 34,
  inappropriateAuthentication: 48,
  invalidCredentials: 49,
  insufficientAccessRights: 50,
  busy: 51,
  unavailable: 52,
  unwillingToPerform: 53,
  other: 80,
} as const

/** Protocol operation tags (application class). */
export const Op = {
  bindRequest: 0x60,
  bindResponse: 0x61,
  unbindRequest: 0x42,
  searchRequest: 0x63,
  searchResultEntry: 0x64,
  searchResultDone: 0x65,
  modifyRequest: 0x66,
  modifyResponse: 0x67,
  addRequest: 0x68,
  addResponse: 0x69,
  delRequest: 0x4a,
  delResponse: 0x6b,
  modDNRequest: 0x6c,
  modDNResponse: 0x6d,
  compareRequest: 0x6e,
  compareResponse: 0x6f,
  abandonRequest: 0x50,
  extendedRequest: 0x77,
  extendedResponse: 0x78,
} as const

/** The write requests, each answered `unwillingToPerform` with its own response tag. */
const WRITES: Record<number, number> = {
  [Op.modifyRequest]: Op.modifyResponse,
  [Op.addRequest]: Op.addResponse,
  [Op.delRequest]: Op.delResponse,
  [Op.modDNRequest]: Op.modDNResponse,
}

export const OID = {
  whoami: '1.3.6.1.4.1.4203.1.11.3',
  passwordModify: '1.3.6.1.4.1.4203.1.11.1',
  startTLS: '1.3.6.1.4.1.1466.20037',
  noticeOfDisconnection: '1.3.6.1.4.1.1466.20036',
  pagedResults: '1.2.840.113556.1.4.319',
} as const

export interface Control {
  type: string
  critical: boolean
  value: Buffer | null
}

/** A search filter in this directory's own terms (attribute names lower-cased). */
export type Filter =
  | { kind: 'and' | 'or'; of: Filter[] }
  | { kind: 'not'; of: Filter }
  | { kind: 'equal' | 'greater' | 'less' | 'approx'; attribute: string; value: string }
  | { kind: 'substrings'; attribute: string; initial: string | null; any: string[]; final: string | null }
  | { kind: 'present'; attribute: string }
  | { kind: 'undefined' }

/** `children` (3, draft-sermersheim-ldap-subordinate-scope, as OpenLDAP's `-s children`): the subtree without its base. */
export type Scope = 'base' | 'one' | 'sub' | 'children'

export type Request = { id: number; controls: Control[] } & (
  | { op: 'bind'; version: number; name: string; password: Buffer | null }
  | { op: 'unbind' }
  | {
      op: 'search'
      base: string
      scope: Scope
      sizeLimit: number
      typesOnly: boolean
      filter: Filter
      attributes: string[]
    }
  | { op: 'compare'; entry: string; attribute: string; value: string }
  | { op: 'extended'; name: string; value: Buffer | null }
  | { op: 'abandon' }
  | { op: 'write'; responseTag: number }
  /** A message over one of `MessageLimits`, not decoded: answered `adminLimitExceeded` under its response tag (none: unanswered). */
  | { op: 'refused'; responseTag: number | null; reason: string }
)

/** The response tag of each request that has one. */
const RESPONSES: Record<number, number> = {
  ...WRITES,
  [Op.bindRequest]: Op.bindResponse,
  [Op.searchRequest]: Op.searchResultDone,
  [Op.compareRequest]: Op.compareResponse,
  [Op.extendedRequest]: Op.extendedResponse,
}

/**
 * The length of the first complete message in `buffer`: 0 when more bytes are needed. Throws
 * WireError on a frame that is not an LDAPMessage SEQUENCE, an indefinite or over-long length,
 * or one over MAX_MESSAGE_BYTES.
 */
export function frameLength(buffer: Buffer, max = MAX_MESSAGE_BYTES): number {
  const size = frameSize(buffer, max)
  return size > 0 && buffer.length >= size ? size : 0
}

/**
 * The size of the message that `buffer` begins (header and content), as soon as its header is
 * there, complete or not: 0 while the header is incomplete. Throws as `frameLength` does.
 */
export function frameSize(buffer: Buffer, max = MAX_MESSAGE_BYTES): number {
  if (buffer.length < 2) return 0
  if (buffer[0] !== 0x30) throw new WireError('not an LDAP message')
  const first = buffer[1] as number
  let length: number
  let header: number
  if (first < 0x80) {
    length = first
    header = 2
  } else {
    const bytes = first & 0x7f
    if (bytes === 0) throw new WireError('indefinite length')
    if (bytes > 4) throw new WireError('length too long')
    if (buffer.length < 2 + bytes) return 0
    length = 0
    for (let i = 0; i < bytes; i++) length = length * 256 + (buffer[2 + i] as number)
    header = 2 + bytes
  }
  if (length + header > max) throw new MessageTooLarge(`message of ${length} bytes over the limit of ${max}`)
  return header + length
}

/** A length prefix over the message limit: the connection is closed before its bytes are read. */
export class MessageTooLarge extends WireError {}

/** One BER element at `at` (single-byte tags, definite lengths): its tag and where its content begins and ends. */
function element(buffer: Buffer, at: number, end: number): { tag: number; start: number; end: number } {
  if (at + 2 > end) throw new WireError('truncated element')
  const tag = buffer[at] as number
  const first = buffer[at + 1] as number
  let start = at + 2
  let length = first
  if (first >= 0x80) {
    const bytes = first & 0x7f
    if (bytes === 0 || bytes > 4) throw new WireError('unsupported length')
    if (start + bytes > end) throw new WireError('truncated length')
    length = 0
    for (let i = 0; i < bytes; i++) length = length * 256 + (buffer[start + i] as number)
    start += bytes
  }
  if (start + length > end) throw new WireError('element longer than its container')
  return { tag, start, end: start + length }
}

/**
 * Why the elements from `from` to `to` are over `limits`, or null: the longest primitive value
 * and the nesting of the whole operation; for a filter (`filter`), its count of items and the
 * nesting of and/or/not. Reads tags and lengths only (a few nanoseconds per element), so a
 * message is measured before @ldapjs builds one object of it.
 */
function overLimits(buffer: Buffer, from: number, to: number, limits: MessageLimits, filter: boolean): string | null {
  const open: number[] = []
  let clauses = 0
  let depth = 0
  const maxNesting = filter ? limits.maxFilterDepth : limits.maxFilterDepth + 8
  let at = from
  while (at < to || open.length > 0) {
    while (open.length > 0 && at === open[open.length - 1]) {
      open.pop()
      if (filter) depth--
    }
    if (at >= to && open.length === 0) break
    const e = element(buffer, at, open[open.length - 1] ?? to)
    if (filter) {
      clauses++
      if (clauses > limits.maxFilterClauses) return `a filter of more than ${limits.maxFilterClauses} items`
      // and (0xa0), or (0xa1), not (0xa2) hold filters; every other item holds values.
      if (e.tag === 0xa0 || e.tag === 0xa1 || e.tag === 0xa2) {
        depth++
        if (depth > limits.maxFilterDepth) return `a filter nested deeper than ${limits.maxFilterDepth}`
        open.push(e.end)
        at = e.start
        continue
      }
      if ((e.tag & 0x20) !== 0 && overLimits(buffer, e.start, e.end, limits, false) !== null) {
        return `a filter value over ${limits.maxValueBytes} bytes`
      }
      if ((e.tag & 0x20) === 0 && e.end - e.start > limits.maxValueBytes) return `a filter value over ${limits.maxValueBytes} bytes`
      at = e.end
      continue
    }
    if ((e.tag & 0x20) !== 0) {
      if (open.length >= maxNesting) return `elements nested deeper than ${maxNesting}`
      open.push(e.end)
      at = e.start
      continue
    }
    if (e.end - e.start > limits.maxValueBytes) return `a value over ${limits.maxValueBytes} bytes`
    at = e.end
  }
  return null
}

function must<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new WireError(`truncated ${what}`)
  return value
}

/**
 * Decodes one complete LDAPMessage (a frame `frameLength` cut). Throws WireError when malformed;
 * a message over `limits` is not decoded but returned as `refused`.
 */
export function decodeRequest(frame: Buffer, limits: MessageLimits = DEFAULT_LIMITS): Request {
  try {
    return decode(new BerReader(frame), frame, limits)
  } catch (error) {
    if (error instanceof WireError) throw error
    throw new WireError(error instanceof Error ? error.message : 'malformed message')
  }
}

function decode(ber: BerReader, frame: Buffer, limits: MessageLimits): Request {
  must(ber.readSequence(0x30), 'message')
  const end = ber.offset + ber.length
  const id = ber.readInt()
  if (!Number.isInteger(id) || id < 0) throw new WireError('invalid message id')
  const tag = must(ber.peek(), 'operation')
  // Measured before decoded: a search's filter first (its walk stops at the item past
  // maxFilterClauses: a 1 MiB OR is refused after 513 items, not walked whole), then the
  // operation and its controls.
  let over = tag === Op.searchRequest ? filterOverLimits(frame, ber.offset, limits) : null
  if (over === null) over = overLimits(frame, ber.offset, end, limits, false)
  if (over !== null) return { op: 'refused', responseTag: RESPONSES[tag] ?? null, reason: over, id, controls: [] }
  const op = decodeOp(ber, tag, id)
  const controls: Control[] = []
  if (ber.offset < end && ber.peek() === 0xa0) {
    ber.readSequence(0xa0)
    const controlsEnd = ber.offset + ber.length
    while (ber.offset < controlsEnd) {
      must(ber.readSequence(0x30), 'control')
      const controlEnd = ber.offset + ber.length
      const type = must(ber.readString(), 'control type')
      let critical = false
      let value: Buffer | null = null
      if (ber.offset < controlEnd && ber.peek() === 0x01) critical = ber.readBoolean()
      if (ber.offset < controlEnd) value = must(ber.readString(0x04, true), 'control value')
      if (ber.offset !== controlEnd) throw new WireError('malformed control')
      controls.push({ type, critical, value })
    }
  }
  if (ber.offset !== end) throw new WireError('trailing bytes in message')
  return { ...op, id, controls } as Request
}

type OpBody = Request extends infer R ? (R extends unknown ? Omit<R, 'id' | 'controls'> : never) : never

/** A search request's filter at `at` (the request's own element) measured against `limits`. */
function filterOverLimits(frame: Buffer, at: number, limits: MessageLimits): string | null {
  const request = element(frame, at, frame.length)
  let position = request.start
  // baseObject, scope, derefAliases, sizeLimit, timeLimit, typesOnly: six elements before the filter.
  for (let i = 0; i < 6; i++) position = element(frame, position, request.end).end
  const filter = element(frame, position, request.end)
  return overLimits(frame, position, filter.end, limits, true)
}

function decodeOp(ber: BerReader, tag: number, id: number): OpBody {
  if (tag === Op.unbindRequest) {
    ber.readRawBuffer(tag)
    return { op: 'unbind' }
  }
  if (tag === Op.abandonRequest) {
    ber.readRawBuffer(tag)
    return { op: 'abandon' }
  }
  const responseTag = WRITES[tag]
  if (responseTag !== undefined) {
    must(ber.readSequence(tag), 'request')
    ber.setOffset(ber.offset + ber.length)
    return { op: 'write', responseTag }
  }
  must(ber.readSequence(tag), 'request')
  const end = ber.offset + ber.length
  let op: OpBody
  switch (tag) {
    case Op.bindRequest: {
      const version = ber.readInt()
      const name = must(ber.readString(), 'bind name')
      // Simple authentication is [0]; anything else (SASL) is read over and refused.
      const password = ber.peek() === 0x80 ? must(ber.readString(0x80, true), 'password') : null
      ber.setOffset(end)
      op = { op: 'bind', version, name, password }
      break
    }
    case Op.searchRequest: {
      const base = must(ber.readString(), 'base')
      const scope = ber.readEnumeration()
      ber.readEnumeration() // derefAliases: there are no aliases
      const sizeLimit = ber.readInt()
      ber.readInt() // timeLimit: answers are immediate
      const typesOnly = ber.readBoolean()
      const filter = toFilter(parseBer(ber), 0)
      must(ber.readSequence(0x30), 'attribute list')
      const listEnd = ber.offset + ber.length
      const attributes: string[] = []
      while (ber.offset < listEnd) attributes.push(must(ber.readString(), 'attribute'))
      if (scope !== 0 && scope !== 1 && scope !== 2 && scope !== 3) throw new WireError('invalid scope')
      op = {
        op: 'search',
        base,
        scope: (['base', 'one', 'sub', 'children'] as const)[scope],
        sizeLimit: Math.max(0, sizeLimit),
        typesOnly,
        filter,
        attributes,
      }
      break
    }
    case Op.compareRequest: {
      const entry = must(ber.readString(), 'entry')
      must(ber.readSequence(0x30), 'assertion')
      const attribute = must(ber.readString(), 'attribute')
      const value = must(ber.readString(), 'value')
      op = { op: 'compare', entry, attribute, value }
      break
    }
    case Op.extendedRequest: {
      const name = must(ber.readString(0x80), 'extended name')
      const value = ber.offset < end && ber.peek() === 0x81 ? must(ber.readString(0x81, true), 'extended value') : null
      op = { op: 'extended', name, value }
      break
    }
    default:
      throw new WireError(`unknown operation 0x${tag.toString(16)} (message ${id})`)
  }
  if (ber.offset !== end) throw new WireError('malformed request')
  return op
}

function text(value: unknown): string {
  if (typeof value === 'string') return value
  if (Buffer.isBuffer(value)) return value.toString('utf8')
  return String(value ?? '')
}

function toFilter(parsed: ParsedFilter, depth: number): Filter {
  // Measured before (filterOverLimits): a bound of last resort only.
  if (depth > 256) throw new WireError('filter nested too deep')
  const attribute = (parsed.attribute ?? '').toLowerCase()
  switch (parsed.type) {
    case 'AndFilter':
    case 'OrFilter':
      return { kind: parsed.type === 'AndFilter' ? 'and' : 'or', of: (parsed.clauses ?? []).map((c) => toFilter(c, depth + 1)) }
    case 'NotFilter':
      return { kind: 'not', of: toFilter(must(parsed.clauses?.[0], 'not filter'), depth + 1) }
    case 'EqualityFilter':
      return { kind: 'equal', attribute, value: text(parsed.value) }
    case 'GreaterThanEqualsFilter':
      return { kind: 'greater', attribute, value: text(parsed.value) }
    case 'LessThanEqualsFilter':
      return { kind: 'less', attribute, value: text(parsed.value) }
    case 'ApproximateFilter':
      return { kind: 'approx', attribute, value: text(parsed.value) }
    case 'PresenceFilter':
      return { kind: 'present', attribute }
    case 'SubstringFilter':
      return {
        kind: 'substrings',
        attribute,
        initial: parsed.subInitial ? text(parsed.subInitial) : null,
        any: (parsed.subAny ?? []).map(text),
        final: parsed.subFinal ? text(parsed.subFinal) : null,
      }
    default:
      // Extensible matches are not supported: Undefined (RFC 4511 §4.5.1.7), matching nothing.
      return { kind: 'undefined' }
  }
}

/** An entry answered to a search: attribute values in order, names as the directory spells them. */
export interface AnswerEntry {
  dn: string
  attributes: { name: string; values: string[] }[]
}

function message(id: number, body: (w: BerWriter) => void, controls?: Control[]): Buffer {
  const w = new BerWriter({ size: 256 })
  w.startSequence(0x30)
  w.writeInt(id)
  body(w)
  if (controls && controls.length > 0) {
    w.startSequence(0xa0)
    for (const control of controls) {
      w.startSequence(0x30)
      w.writeString(control.type)
      if (control.critical) w.writeBoolean(true)
      if (control.value) w.writeBuffer(control.value, 0x04)
      w.endSequence()
    }
    w.endSequence()
  }
  w.endSequence()
  return w.buffer
}

function result(w: BerWriter, code: number, matchedDN: string, diagnostic: string): void {
  w.writeEnumeration(code)
  w.writeString(matchedDN)
  w.writeString(diagnostic)
}

/** An LDAPResult under `tag` (bind, search done, compare, the write responses). */
export function encodeResult(id: number, tag: number, code: number, diagnostic = '', controls?: Control[], matchedDN = ''): Buffer {
  return message(
    id,
    (w) => {
      w.startSequence(tag)
      result(w, code, matchedDN, diagnostic)
      w.endSequence()
    },
    controls,
  )
}

/** An ExtendedResponse (RFC 4511 §4.12), with its optional name and value. */
export function encodeExtended(id: number, code: number, diagnostic: string, name: string | null, value: Buffer | null): Buffer {
  return message(id, (w) => {
    w.startSequence(Op.extendedResponse)
    result(w, code, '', diagnostic)
    if (name) w.writeString(name, 0x8a)
    if (value) w.writeBuffer(value, 0x8b)
    w.endSequence()
  })
}

/** A Notice of Disconnection (RFC 4511 §4.4.1): an unsolicited ExtendedResponse, message id 0; the server closes next. */
export function encodeNotice(code: number, diagnostic: string): Buffer {
  return encodeExtended(0, code, diagnostic, OID.noticeOfDisconnection, null)
}

/** Bytes of a BER length (the definite forms BerWriter writes: short, 0x81, 0x82, 0x83). */
const lengthSize = (n: number): number => {
  if (n > 0xffffff) throw new Error('sequence too long')
  return n <= 0x7f ? 1 : n <= 0xff ? 2 : n <= 0xffff ? 3 : 4
}

/** Writes a tag and a length at `at`; the position after them. */
function header(out: Buffer, at: number, tag: number, n: number): number {
  out[at++] = tag
  const size = lengthSize(n)
  if (size === 1) out[at++] = n
  else {
    out[at++] = 0x80 | (size - 1)
    for (let shift = (size - 2) * 8; shift >= 0; shift -= 8) out[at++] = (n >>> shift) & 0xff
  }
  return at
}

/** A tag-length-value's whole size. */
const tlv = (n: number): number => 1 + lengthSize(n) + n

/**
 * An attribute's PartialAttribute `{type, vals}` alone: the bytes `EntryWriter.entry` writes for it. An
 * attribute many entries share (a person's objectClass, one memberOf list for everyone with the
 * same groups) is encoded once and copied into each entry (`sizeEntryOp`, `writeEntryOp`).
 */
export function encodeAttribute(name: string, values: readonly string[], typesOnly: boolean): Buffer {
  const nameSize = Buffer.byteLength(name)
  let set = 0
  if (!typesOnly) for (const value of values) set += tlv(Buffer.byteLength(value))
  const content = tlv(nameSize) + tlv(set)
  const out = Buffer.allocUnsafe(tlv(content))
  let at = header(out, 0, 0x30, content)
  at = header(out, at, 0x04, nameSize)
  at += out.write(name, at, 'utf8')
  at = header(out, at, 0x31, set)
  if (!typesOnly)
    for (const value of values) {
      at = header(out, at, 0x04, Buffer.byteLength(value))
      at += out.write(value, at, 'utf8')
    }
  return out
}

/** An attribute of an answer: its name and values, or its PartialAttribute already encoded (`encodeAttribute`, same `typesOnly`). */
export type AnswerAttribute = { name: string; values: readonly string[] } | Buffer

/**
 * What `sizeEntryOp` worked out for `writeEntryOp`, which runs right after it (encoding is
 * synchronous): per attribute its name's, value set's and content's sizes, then the DN's size and
 * the attribute list's. Module-level, so sizing an entry allocates nothing.
 */
let scratch: number[] = []
let sizedDn = 0
let sizedAttributes = 0

/** The size of the searchResultEntry protocolOp of `dn` and `list`, remembered for `writeEntryOp`. */
function sizeEntryOp(dn: string, list: readonly AnswerAttribute[], typesOnly: boolean): number {
  const dnSize = Buffer.byteLength(dn)
  if (scratch.length < list.length * 3) scratch = new Array<number>(list.length * 3).fill(0)
  const sizes = scratch
  let attributes = 0
  for (let i = 0; i < list.length; i++) {
    const attribute = list[i] as AnswerAttribute
    if (Buffer.isBuffer(attribute)) {
      attributes += attribute.length
      continue
    }
    const name = Buffer.byteLength(attribute.name)
    let set = 0
    if (!typesOnly) for (const value of attribute.values) set += tlv(Buffer.byteLength(value))
    const content = tlv(name) + tlv(set)
    sizes[i * 3] = name
    sizes[i * 3 + 1] = set
    sizes[i * 3 + 2] = content
    attributes += tlv(content)
  }
  sizedDn = dnSize
  sizedAttributes = attributes
  return tlv(tlv(dnSize) + tlv(attributes))
}

/**
 * Writes `text` as UTF-8 at `at`; the position after it. A short ASCII string (a uid, an
 * attribute's name, a DN) is copied by a loop here: for a few characters Buffer#write's call into
 * C++ costs several times the copy (about even at 40 characters). Anything else goes through
 * Buffer#write.
 */
function writeUtf8(out: Buffer, at: number, text: string): number {
  const n = text.length
  if (n > 64) return at + out.write(text, at, 'utf8')
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0x80) return at + out.write(text, at, 'utf8')
    out[at + i] = c
  }
  return at + n
}

/** Writes at `at` the protocolOp `sizeEntryOp` just sized (the same arguments); the position after it. */
function writeEntryOp(out: Buffer, at: number, dn: string, list: readonly AnswerAttribute[], typesOnly: boolean): number {
  const sizes = scratch
  at = header(out, at, Op.searchResultEntry, tlv(sizedDn) + tlv(sizedAttributes))
  at = writeUtf8(out, header(out, at, 0x04, sizedDn), dn)
  at = header(out, at, 0x30, sizedAttributes)
  for (let i = 0; i < list.length; i++) {
    const attribute = list[i] as AnswerAttribute
    if (Buffer.isBuffer(attribute)) {
      // TypedArray#set: Buffer#copy's JavaScript wrapper makes a view of the source at each call.
      out.set(attribute, at)
      at += attribute.length
      continue
    }
    at = header(out, at, 0x30, sizes[i * 3 + 2] as number)
    at = writeUtf8(out, header(out, at, 0x04, sizes[i * 3] as number), attribute.name)
    at = header(out, at, 0x31, sizes[i * 3 + 1] as number)
    if (!typesOnly) for (const value of attribute.values) at = writeUtf8(out, header(out, at, 0x04, Buffer.byteLength(value)), value)
  }
  return at
}

/** Bytes of a messageID: INTEGER, minimal two's complement (0 … 2^31 − 1). */
const idSize = (id: number): number => (id < 0x80 ? 1 : id < 0x8000 ? 2 : id < 0x800000 ? 3 : 4)

/** Writes the header of the LDAPMessage `{id, op}` (no controls) for an op of `opSize` bytes at `at`; the position of the op. */
function writeMessageHeader(out: Buffer, at: number, id: number, idBytes: number, opSize: number): number {
  at = header(out, at, 0x30, 2 + idBytes + opSize)
  out[at++] = 0x02
  out[at++] = idBytes
  for (let shift = (idBytes - 1) * 8; shift >= 0; shift -= 8) out[at++] = (id >>> shift) & 0xff
  return at
}

/**
 * A slice of a search's answer (its searchResultEntry messages, then maybe the result) written
 * straight into one buffer: each entry is sized, then written in place, with no buffer of its own
 * and no copy of one. `take()` answers what was written since the last take. (A person's
 * protocolOp is not kept between searches: a hundred thousand small kept buffers cost the first
 * sync more in the collector than they saved the next ones, issue 48.)
 */
export class EntryWriter {
  private out: Buffer | null = null
  private at = 0
  private readonly idBytes: number
  /** The first buffer's size: about the last slice's, so a slice usually fits in one. */
  private capacity = 4096

  constructor(private readonly id: number) {
    this.idBytes = idSize(id)
  }

  /** Appends the searchResultEntry message of `dn` and `list` (some attributes already encoded: `encodeAttribute`). */
  entry(dn: string, list: readonly AnswerAttribute[], typesOnly: boolean): void {
    const opSize = sizeEntryOp(dn, list, typesOnly)
    const out = this.room(tlv(2 + this.idBytes + opSize))
    this.at = writeEntryOp(out, writeMessageHeader(out, this.at, this.id, this.idBytes, opSize), dn, list, typesOnly)
  }

  /** The messages written since the last take, then `tail` (a whole message: the search's result). */
  take(tail: Buffer | null = null): Buffer {
    if (this.at === 0 && tail !== null) return tail
    if (tail !== null) {
      this.room(tail.length).set(tail, this.at)
      this.at += tail.length
    }
    const bytes = (this.out ?? Buffer.alloc(0)).subarray(0, this.at)
    this.capacity = Math.max(4096, this.at + (this.at >> 3))
    this.out = null
    this.at = 0
    return bytes
  }

  /** The buffer, with room for `size` more bytes at `at` (a bigger one, the bytes so far copied, when it has not). */
  private room(size: number): Buffer {
    const out = this.out
    if (out !== null && this.at + size <= out.length) return out
    const bigger = Buffer.allocUnsafe(Math.max(this.capacity, 2 * (out?.length ?? 0), this.at + size))
    if (out !== null) out.copy(bigger, 0, 0, this.at)
    this.out = bigger
    return bigger
  }
}

/** The paged-results control's value (RFC 2696): `{size, cookie}`. */
export function decodePagedValue(value: Buffer | null): { size: number; cookie: Buffer } {
  const ber = new BerReader(must(value, 'paged results value'))
  must(ber.readSequence(0x30), 'paged results')
  const size = ber.readInt()
  const cookie = must(ber.readString(0x04, true), 'paged results cookie')
  return { size, cookie }
}

export function encodePagedValue(size: number, cookie: Buffer): Buffer {
  const w = new BerWriter({ size: 64 })
  w.startSequence(0x30)
  w.writeInt(size)
  w.writeBuffer(cookie, 0x04)
  w.endSequence()
  return w.buffer
}

/** RFC 3062's PasswdModifyRequestValue: `{userIdentity?, oldPasswd?, newPasswd?}`. */
export function decodePasswordModify(value: Buffer | null): {
  user: string | null
  oldPassword: string | null
  newPassword: string | null
} {
  const out = { user: null as string | null, oldPassword: null as string | null, newPassword: null as string | null }
  if (!value || value.length === 0) return out
  const ber = new BerReader(value)
  must(ber.readSequence(0x30), 'password modify')
  const end = ber.offset + ber.length
  while (ber.offset < end) {
    const tag = ber.peek()
    if (tag === 0x80) out.user = must(ber.readString(0x80), 'user identity')
    else if (tag === 0x81) out.oldPassword = must(ber.readString(0x81), 'old password')
    else if (tag === 0x82) out.newPassword = must(ber.readString(0x82), 'new password')
    else throw new WireError('malformed password modify request')
  }
  return out
}
