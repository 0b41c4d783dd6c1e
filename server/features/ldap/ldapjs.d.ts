/** The parts of the untyped @ldapjs codec packages this feature uses (pinned in package.json). */
declare module '@ldapjs/asn1' {
  export class BerReader {
    constructor(buffer: Buffer)
    readonly offset: number
    readonly length: number
    readonly remain: number
    peek(): number | null
    readSequence(tag?: number): number | null
    readInt(tag?: number): number
    readEnumeration(): number
    readBoolean(tag?: number): boolean
    readString(tag?: number): string | null
    readString(tag: number, asBuffer: true): Buffer | null
    readRawBuffer(tag: number): Buffer
    setOffset(position: number): void
  }
  export class BerWriter {
    constructor(options?: { size?: number; growthFactor?: number })
    readonly buffer: Buffer
    startSequence(tag?: number): void
    endSequence(): void
    writeInt(value: number, tag?: number): void
    writeEnumeration(value: number, tag?: number): void
    writeBoolean(value: boolean, tag?: number): void
    writeString(value: string, tag?: number): void
    writeBuffer(value: Buffer, tag: number): void
    appendBuffer(value: Buffer): void
  }
}

declare module '@ldapjs/filter' {
  import type { BerReader } from '@ldapjs/asn1'
  export interface ParsedFilter {
    type: string
    attribute?: string
    value?: unknown
    filter?: ParsedFilter
    clauses?: ParsedFilter[]
    subInitial?: string
    subAny?: string[]
    subFinal?: string
    toString(): string
  }
  export function parseBer(ber: BerReader): ParsedFilter
  export function parseString(text: string): ParsedFilter & { toBer(): { buffer: Buffer } }
}

/** Used by the tests only: valid messages built by ldapjs's own classes, mutated by the fuzz. */
declare module '@ldapjs/messages' {
  class Message {
    constructor(options: Record<string, unknown>)
    toBer(): { buffer: Buffer }
  }
  export class BindRequest extends Message {}
  export class SearchRequest extends Message {}
  export class CompareRequest extends Message {}
  export class ExtensionRequest extends Message {}
  export class AddRequest extends Message {}
}
