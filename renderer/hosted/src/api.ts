/**
 * The hosted pages talk to the better-auth API of the server that serves them, same origin, with
 * the session cookie. The base path is read from the page's own address: `{basePath}/ui/<page>`.
 */
export const basePath: string = location.pathname.replace(/\/ui(?:\/account)?(?:\/[^/]*)?\/?$/, '')

/** The page name: what follows `{basePath}/ui/` (`sign-in`, `account/apps`). */
export const pageName: string = /\/ui\/((?:account\/)?[^/]+)\/?$/.exec(location.pathname)?.[1] ?? 'sign-in'

/** A URL of a hosted page, absolute (links in mail and callbackURLs need the origin). */
export const pageURL = (page: string, params: Record<string, string> = {}): string => {
  const url = new URL(`${basePath}/ui/${page}`, location.origin)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.href
}

/** A refusal of the API: better-auth's body `{code, message}` and the status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds the server asked to wait (Retry-After / X-Retry-After), when it said. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message)
  }
}

/** A wait in words: "45 seconds", "1 minute", "2 hours and 5 minutes" (minutes rounded up). */
export function waitInWords(seconds: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`
  if (seconds < 60) return plural(Math.max(1, Math.ceil(seconds)), 'second')
  const minutes = Math.ceil(seconds / 60)
  if (minutes < 60) return plural(minutes, 'minute')
  const hours = Math.floor(minutes / 60)
  const rest = minutes % 60
  return rest ? `${plural(hours, 'hour')} and ${plural(rest, 'minute')}` : plural(hours, 'hour')
}

/** The Retry-After of an answer in seconds (a number of seconds or an HTTP date), or null. */
function retryAfterOf(response: Response): number | null {
  const value = response.headers.get('retry-after') ?? response.headers.get('x-retry-after')
  if (!value) return null
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const at = Date.parse(value)
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000))
}

export interface PublicConfig {
  appName: string
  logo: string | null
  color: string
  emailAndPassword: boolean
  signUp: boolean
  username: boolean
  passkey: boolean
  twoFactor: boolean
  forgotPassword?: boolean
  /** The sign-in page offers "Email me a link" (magicLink.enabled). */
  magicLink?: boolean
  /** The sign-in page offers "Email me a code" (emailOTP.enabled). */
  emailOTP?: boolean
  socialProviders: Array<{ id: string; name: string }>
  /** A password change leaves the person's app passwords working (`appPasswords.keepOnPasswordChange`). */
  appPasswordsKeptOnPasswordChange?: boolean
  /** The Profile page offers a new email address (`user.changeEmail.enabled`). */
  changeEmail?: boolean
  /** The account pages offer "Delete your account" (`user.deleteUser.enabled`). */
  deleteUser?: boolean
}

/** GET when no body is given, POST JSON otherwise; the path is relative to the base path. */
export async function api<T>(path: string, body?: unknown, init: { accept?: string } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: init.accept ?? 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  let response: Response
  try {
    response = await fetch(`${basePath}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    })
  } catch {
    throw new ApiError(0, 'NETWORK_ERROR', 'The server could not be reached. Check your connection and try again.')
  }
  const text = await response.text()
  let data: unknown = null
  try {
    data = text ? JSON.parse(text) : null
  } catch {
    data = null
  }
  if (!response.ok) {
    const failure = (data ?? {}) as { code?: unknown; message?: unknown }
    const retryAfter = response.status === 429 || response.status === 503 ? retryAfterOf(response) : null
    let message = typeof failure.message === 'string' && failure.message ? failure.message : `The request failed (HTTP ${response.status}).`
    // A rate limit or lockout (429) or an outage (503) says when to come back, in words.
    // The server's "Please try again later." becomes the actual wait.
    if (retryAfter !== null)
      message = `${message.replace(/\s*Please try again later\.?\s*$/i, '').replace(/\s*$/, '')} Try again in ${waitInWords(retryAfter)}.`
    throw new ApiError(response.status, typeof failure.code === 'string' ? failure.code : `HTTP_${response.status}`, message, retryAfter)
  }
  return data as T
}
