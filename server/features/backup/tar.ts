import { createWriteStream, mkdirSync, symlinkSync } from 'node:fs'
import { dirname, join, normalize, sep } from 'node:path'
import { pipeline } from 'node:stream/promises'

/**
 * A small POSIX ustar reader and writer (regular files, directories, symlinks), so a backup is a
 * plain `.tar.gz` any `tar xzf` opens, made with Node alone. Entries are streamed: a database of
 * any size never sits in memory whole.
 */

const BLOCK = 512

export class TarError extends Error {}

function octal(value: number, length: number): string {
  return `${value.toString(8).padStart(length - 1, '0')}\0`
}

/** One ustar header block. Names up to 100 bytes (ours are short and flat). */
export function tarHeader(name: string, size: number, mtimeSeconds: number, type: '0' | '5' = '0', mode = 0o600): Buffer {
  const header = Buffer.alloc(BLOCK)
  if (Buffer.byteLength(name) > 100) throw new TarError(`name too long for a tar entry: ${name}`)
  header.write(name, 0, 100, 'utf8')
  header.write(octal(mode, 8), 100, 8, 'ascii')
  header.write(octal(0, 8), 108, 8, 'ascii')
  header.write(octal(0, 8), 116, 8, 'ascii')
  header.write(octal(size, 12), 124, 12, 'ascii')
  header.write(octal(Math.floor(mtimeSeconds), 12), 136, 12, 'ascii')
  header.write('        ', 148, 8, 'ascii')
  header.write(type, 156, 1, 'ascii')
  header.write('ustar\0', 257, 6, 'ascii')
  header.write('00', 263, 2, 'ascii')
  let sum = 0
  for (const byte of header) sum += byte
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii')
  return header
}

export const tarPadding = (size: number): Buffer => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK)
export const tarEnd = (): Buffer => Buffer.alloc(BLOCK * 2)

export interface TarEntry {
  name: string
  type: 'file' | 'directory' | 'symlink' | 'other'
  size: number
  mode: number
  linkName: string
}

const field = (block: Buffer, start: number, length: number): string => {
  const raw = block.subarray(start, start + length)
  const end = raw.indexOf(0)
  return raw.subarray(0, end === -1 ? length : end).toString('utf8')
}

const number = (block: Buffer, start: number, length: number): number => {
  const text = field(block, start, length).trim()
  if (text === '') return 0
  if (!/^[0-7]+$/.test(text)) throw new TarError('not a tar archive (bad number field)')
  return Number.parseInt(text, 8)
}

function parseHeader(block: Buffer): TarEntry {
  let sum = 0
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : (block[i] as number)
  if (number(block, 148, 8) !== sum) throw new TarError('not a tar archive (header checksum mismatch)')
  const prefix = field(block, 345, 155)
  const base = field(block, 0, 100)
  const flag = String.fromCharCode(block[156] as number)
  return {
    name: prefix ? `${prefix}/${base}` : base,
    type: flag === '0' || flag === '\0' ? 'file' : flag === '5' ? 'directory' : flag === '2' ? 'symlink' : 'other',
    size: number(block, 124, 12),
    mode: number(block, 100, 8),
    linkName: field(block, 157, 100),
  }
}

/**
 * Reads a tar stream, calling `onEntry` for each entry with a readable of its contents (which the
 * callback must consume). Throws TarError when the stream ends inside an entry or a header is bad.
 */
export async function readTar(
  source: AsyncIterable<Buffer>,
  onEntry: (entry: TarEntry, body: AsyncIterable<Buffer>) => Promise<void>,
): Promise<void> {
  let buffered: Buffer = Buffer.alloc(0)
  const iterator = source[Symbol.asyncIterator]()
  let done = false
  const fill = async (n: number): Promise<boolean> => {
    while (buffered.length < n && !done) {
      const next = await iterator.next()
      if (next.done) done = true
      else buffered = buffered.length ? Buffer.concat([buffered, next.value]) : next.value
    }
    return buffered.length >= n
  }
  let paxPath: string | null = null
  for (;;) {
    if (!(await fill(BLOCK))) {
      if (buffered.length === 0) throw new TarError('archive is truncated (no end marker)')
      throw new TarError('archive is truncated')
    }
    const block = buffered.subarray(0, BLOCK)
    buffered = buffered.subarray(BLOCK)
    if (block.every((b) => b === 0)) return
    const entry = parseHeader(block)
    if (paxPath) {
      entry.name = paxPath
      paxPath = null
    }
    let remaining = entry.size
    const padding = (BLOCK - (entry.size % BLOCK)) % BLOCK
    async function* body(): AsyncGenerator<Buffer> {
      while (remaining > 0) {
        if (buffered.length === 0 && !(await fill(1))) throw new TarError('archive is truncated')
        const chunk = buffered.subarray(0, Math.min(remaining, buffered.length))
        buffered = buffered.subarray(chunk.length)
        remaining -= chunk.length
        yield chunk
      }
    }
    const flag = String.fromCharCode(block[156] as number)
    if (flag === 'x') {
      const chunks: Buffer[] = []
      for await (const chunk of body()) chunks.push(chunk)
      const match = /\d+ path=([^\n]*)\n/.exec(Buffer.concat(chunks).toString('utf8'))
      paxPath = match?.[1] ?? null
    } else {
      await onEntry(entry, body())
      // Whatever the callback left unread is skipped.
      for await (const _ of body()) {
      }
    }
    if (!(await fill(padding))) throw new TarError('archive is truncated')
    buffered = buffered.subarray(padding)
  }
}

/** A relative path inside `root`, or null for absolute paths and `..` escapes. */
export function safeJoin(root: string, name: string): string | null {
  const path = normalize(join(root, name))
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep) ? path : null
}

/** Extracts a tar stream into `dir` (regular files, directories, symlinks; nothing outside `dir`). */
export async function extractTar(source: AsyncIterable<Buffer>, dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true })
  await readTar(source, async (entry, body) => {
    const path = safeJoin(dir, entry.name)
    if (!path) throw new TarError(`archive entry escapes the target: ${entry.name}`)
    if (entry.type === 'directory') mkdirSync(path, { recursive: true })
    else if (entry.type === 'symlink') {
      mkdirSync(dirname(path), { recursive: true })
      symlinkSync(entry.linkName, path)
    } else if (entry.type === 'file') {
      mkdirSync(dirname(path), { recursive: true })
      await pipeline(body, createWriteStream(path, { mode: entry.mode || 0o644 }))
    }
  })
}
