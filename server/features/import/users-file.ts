import { createReadStream } from 'node:fs'
import { Transform } from 'node:stream'

/**
 * Reading a users file (issue 29) as a stream, one record at a time, so a file of hundreds of
 * megabytes is read in bounded memory: a JSON array (its elements cut out one by one, each parsed
 * alone) or a CSV with a header (csv-parse). Each record carries its position as the contract
 * names it: CSV the physical line where the record starts (header = 1), JSON the element's
 * 1-based position. `bytesRead` moves as the file is read (progress and ETA).
 */
export type UsersFileFormat = 'json' | 'csv'

export type FileRecord =
  | { line: number; fields: Record<string, unknown> }
  /** A record that could not be read at all; `fatal`: the file's structure is broken from here on. */
  | { line: number; problem: string; field: string | null; fatal?: boolean }

export interface RecordSource {
  records: AsyncIterable<FileRecord>
  bytesRead(): number
}

/** The CSV columns and JSON keys a users file may have. */
export const USER_FILE_FIELDS = ['email', 'name', 'emailVerified', 'username', 'role', 'createdAt', 'image', 'passwordHash'] as const

export function inferFormat(path: string): UsersFileFormat | null {
  const lower = path.toLowerCase()
  if (lower.endsWith('.json')) return 'json'
  if (lower.endsWith('.csv')) return 'csv'
  return null
}

export function readUsersFile(path: string, format: UsersFileFormat): RecordSource {
  const stream = createReadStream(path, { highWaterMark: 256 * 1024 })
  const bytesRead = () => stream.bytesRead
  return { records: format === 'json' ? jsonRecords(stream) : csvRecords(stream), bytesRead }
}

// ---------------------------------------------------------------------------------------------
// CSV

/** CRLF → LF before csv-parse, whose line count is exact only with one-character line endings. */
function crlfToLf(): Transform {
  let pendingCR = false
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let text = (pendingCR ? '\r' : '') + chunk.toString('latin1')
      pendingCR = text.endsWith('\r')
      if (pendingCR) text = text.slice(0, -1)
      done(null, Buffer.from(text.replace(/\r\n/g, '\n'), 'latin1'))
    },
    flush(done) {
      done(null, pendingCR ? Buffer.from('\r') : null)
    },
  })
}

async function* csvRecords(stream: NodeJS.ReadableStream): AsyncGenerator<FileRecord> {
  // Loaded at the first CSV import, not at every start (issue 39: an unused capability costs nothing).
  const { parse } = await import('csv-parse')
  let header = null as string[] | null
  const parser = stream.pipe(crlfToLf()).pipe(
    parse({
      bom: true,
      info: true,
      raw: true,
      skip_empty_lines: true,
      relax_column_count: true,
      columns: (names: string[]) => {
        header = names.map((n) => n.trim())
        return header
      },
    }),
  )
  let headerChecked = false
  try {
    for await (const item of parser as AsyncIterable<{ record: Record<string, string>; raw: string; info: { lines: number } }>) {
      if (!headerChecked) {
        headerChecked = true
        const columns: string[] = header ?? []
        const unknown = columns.filter((c) => !(USER_FILE_FIELDS as readonly string[]).includes(c))
        if (unknown.length > 0 || !columns.includes('email')) {
          yield {
            line: 1,
            field: unknown[0] ?? 'email',
            problem:
              unknown.length > 0
                ? `unknown column "${unknown[0]}" (columns: ${USER_FILE_FIELDS.join(', ')})`
                : 'the header has no email column',
            fatal: true,
          }
          return
        }
      }
      const interior = item.raw.replace(/^\n+/, '').replace(/\n$/, '').split('\n').length - 1
      const line = item.info.lines - interior
      const fields: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(item.record)) {
        // An empty cell is an absent field; a row longer than the header has no name for its extra cells.
        if (value !== '' && value !== undefined) fields[key] = value
      }
      if (Object.keys(item.record).length > (header?.length ?? 0)) {
        yield { line, field: null, problem: 'more cells than the header has columns' }
        continue
      }
      yield { line, fields }
    }
  } catch (e) {
    const error = e as Error & { code?: string; lines?: number }
    if (!error.code?.startsWith('CSV_')) throw e
    // Broken quoting: every record after it is in doubt, so the file is refused (no --skip-invalid).
    yield { line: error.lines ?? 1, field: null, problem: `CSV: ${error.message}`, fatal: true }
  }
}

// ---------------------------------------------------------------------------------------------
// JSON

/**
 * The elements of a top-level JSON array, cut out by a scanner that follows strings and nesting
 * (no whole-file parse), each then given to JSON.parse.
 */
async function* jsonRecords(stream: NodeJS.ReadableStream): AsyncGenerator<FileRecord> {
  let state: 'before' | 'between' | 'element' | 'after' = 'before'
  let depth = 0
  let inString = false
  let escaped = false
  let element = ''
  let position = 0
  const finish = (text: string): FileRecord => {
    position++
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (e) {
      return { line: position, field: null, problem: `malformed JSON element: ${(e as Error).message}` }
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { line: position, field: null, problem: 'an element must be an object' }
    }
    return { line: position, fields: value as Record<string, unknown> }
  }
  stream.setEncoding?.('utf8')
  for await (const chunk of stream as AsyncIterable<string>) {
    let start = state === 'element' ? 0 : -1
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i)
      if (state === 'element') {
        if (inString) {
          if (escaped) escaped = false
          else if (c === 0x5c) escaped = true
          else if (c === 0x22) inString = false
          continue
        }
        if (c === 0x22) inString = true
        else if (c === 0x7b || c === 0x5b) depth++
        else if (c === 0x7d || c === 0x5d) {
          if (depth === 0) {
            // The array's closing bracket right after a scalar element.
            element += chunk.slice(start, i)
            yield finish(element)
            element = ''
            state = 'after'
            continue
          }
          depth--
          if (depth === 0) {
            element += chunk.slice(start, i + 1)
            yield finish(element)
            element = ''
            state = 'between'
          }
        } else if (c === 0x2c && depth === 0) {
          element += chunk.slice(start, i)
          yield finish(element)
          element = ''
          state = 'between'
        }
        continue
      }
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0xfeff) continue
      if (state === 'before') {
        if (c !== 0x5b) {
          yield { line: 1, field: null, problem: 'a JSON users file must be an array of objects', fatal: true }
          return
        }
        state = 'between'
      } else if (state === 'between') {
        if (c === 0x2c) continue
        if (c === 0x5d) {
          state = 'after'
          continue
        }
        state = 'element'
        start = i
        depth = 0
        i-- // the element's first character is scanned as part of it
      } else {
        yield { line: position + 1, field: null, problem: 'text after the end of the JSON array', fatal: true }
        return
      }
    }
    if (state === 'element') element += chunk.slice(Math.max(start, 0))
  }
  if ((state as string) !== 'after') {
    yield { line: position + 1, field: null, problem: 'the JSON array is not closed (truncated file?)', fatal: true }
  }
}
