import { APIError } from '../core/errors.js'

export const MAX_BODY_BYTES = 1024 * 1024

const tooLarge = () => new APIError(413, 'PAYLOAD_TOO_LARGE', 'Request body is larger than 1 MiB')

async function readLimited(request: Request): Promise<Buffer> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw tooLarge()
  if (!request.body) return Buffer.alloc(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > MAX_BODY_BYTES) {
      await reader.cancel()
      throw tooLarge()
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

/** Form values arrive as strings; booleans are restored so `rememberMe=false` means false. */
function fromForm(entries: Iterable<[string, FormDataEntryValue]>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of entries) {
    if (typeof value !== 'string') continue
    out[key] = value === 'true' ? true : value === 'false' ? false : value
  }
  return out
}

const invalid = (message: string) => new APIError(400, 'VALIDATION_ERROR', message)

/**
 * Reads a POST body: JSON, form-urlencoded or multipart, at most 1 MiB. An empty body is
 * `undefined`; anything malformed is a 4xx, never an exception that becomes a 500.
 */
export async function readBody(request: Request): Promise<unknown> {
  const bytes = await readLimited(request)
  if (bytes.byteLength === 0) return undefined
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw invalid('Request body is not valid UTF-8')
  }
  if (type === 'application/json' || type.endsWith('+json') || type === '') {
    try {
      return JSON.parse(text)
    } catch {
      throw new APIError(400, 'BAD_REQUEST', 'Invalid JSON in request body')
    }
  }
  if (type === 'application/x-www-form-urlencoded') return fromForm(new URLSearchParams(text))
  if (type === 'multipart/form-data') {
    try {
      const form = await new Response(new Uint8Array(bytes), {
        headers: { 'content-type': request.headers.get('content-type') ?? '' },
      }).formData()
      return fromForm(form.entries())
    } catch {
      throw invalid('Request body is not valid multipart/form-data')
    }
  }
  throw new APIError(415, 'UNSUPPORTED_MEDIA_TYPE', `Unsupported content type: ${type}`)
}
