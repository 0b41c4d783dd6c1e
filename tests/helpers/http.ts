/** A minimal browser-like HTTP client: a cookie jar and an Origin header. */
export class CookieJar {
  readonly cookies = new Map<string, string>()

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq).trim()
      const value = pair.slice(eq + 1).trim()
      const expired = attrs.some((a) => a.trim().toLowerCase() === 'max-age=0')
      if (expired || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  get(name: string): string | undefined {
    return this.cookies.get(name)
  }
}

export interface ClientOptions {
  origin?: string | null
  headers?: Record<string, string>
}

export interface Answer<T = unknown> {
  status: number
  body: T
  text: string
  headers: Headers
  cookies: string[]
}

export class HttpClient {
  readonly jar = new CookieJar()

  constructor(
    readonly base: string,
    private readonly options: ClientOptions = {},
  ) {}

  async request<T = unknown>(
    method: string,
    path: string,
    init: { body?: unknown; headers?: Record<string, string>; raw?: string } = {},
  ): Promise<Answer<T>> {
    const headers: Record<string, string> = { ...this.options.headers, ...init.headers }
    const origin = this.options.origin === undefined ? new URL(this.base).origin : this.options.origin
    if (origin && !('origin' in headers)) headers.origin = origin
    const cookie = this.jar.header()
    if (cookie && !('cookie' in headers)) headers.cookie = cookie
    let body: string | undefined
    if (init.raw !== undefined) body = init.raw
    else if (init.body !== undefined) {
      body = JSON.stringify(init.body)
      headers['content-type'] ??= 'application/json'
    }
    const response = await fetch(`${this.base}${path}`, { method, headers, body, redirect: 'manual' })
    this.jar.store(response)
    const text = await response.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {}
    return { status: response.status, body: parsed as T, text, headers: response.headers, cookies: response.headers.getSetCookie() }
  }

  get<T = unknown>(path: string, headers?: Record<string, string>) {
    return this.request<T>('GET', path, { headers })
  }

  post<T = unknown>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('POST', path, { body, headers })
  }
}

let counter = 0
/** A unique, valid email for each call. */
export const uniqueEmail = (prefix = 'user'): string => `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}@example.com`

export interface SignedUp {
  client: HttpClient
  user: { id: string; email: string; name: string }
  token: string
  email: string
  password: string
}

/** Signs a new user up through the API; the returned client holds its session cookie. */
export async function signUp(base: string, overrides: Record<string, unknown> = {}): Promise<SignedUp> {
  const client = new HttpClient(base)
  const email = (overrides.email as string | undefined) ?? uniqueEmail()
  const password = (overrides.password as string | undefined) ?? 'correct horse battery'
  const res = await client.post<{ token: string; user: SignedUp['user'] }>('/sign-up/email', {
    name: 'Test User',
    email,
    password,
    ...overrides,
  })
  if (res.status !== 200) throw new Error(`sign-up failed: ${res.status} ${res.text}`)
  return { client, user: res.body.user, token: res.body.token, email, password }
}

/**
 * One request through node:http, for headers fetch will not send as given (fetch sets its own
 * Sec-Fetch-* values) and for malformed requests.
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; agent?: import('node:http').Agent },
): Promise<{ status: number; headers: import('node:http').IncomingHttpHeaders; text: string }> {
  return import('node:http').then(
    ({ request }) =>
      new Promise((resolve, reject) => {
        const req = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: options.agent }, (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }))
        })
        req.on('error', reject)
        req.end(options.body)
      }),
  )
}

/**
 * A fetch for the official better-auth client that behaves like a browser app on `origin`: it
 * sends the Origin header and keeps cookies in `jar`.
 */
export function jarFetch(
  origin: string,
  jar: CookieJar,
  options: { redirect?: RequestRedirect; onResponse?: (response: Response) => void } = {},
) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers)
    headers.set('origin', origin)
    const cookie = jar.header()
    if (cookie) headers.set('cookie', cookie)
    const response = await fetch(input, { ...init, headers, ...(options.redirect ? { redirect: options.redirect } : {}) })
    jar.store(response)
    options.onResponse?.(response)
    return response
  }
}

/** Error bodies the spec names, written out once for the tests. */
export const ERRORS = {
  UNAUTHORIZED: { code: 'UNAUTHORIZED', message: 'Unauthorized' },
  INVALID_EMAIL_OR_PASSWORD: { code: 'INVALID_EMAIL_OR_PASSWORD', message: 'Invalid email or password' },
  TOO_MANY_REQUESTS: { code: 'TOO_MANY_REQUESTS', message: 'Too many requests. Please try again later.' },
  NOT_FOUND: { code: 'NOT_FOUND', message: 'Not Found' },
} as const

/** `[status, body]` of an answer, to compare with one `toEqual`. */
export const statusAndBody = (res: { status: number; body: unknown }): [number, unknown] => [res.status, res.body]
