import { api, pageURL } from './api'
import { forwardAuthReturnTo, safeReturnTo } from './return-to'

/**
 * Issue 49 §10, enrolment when required: after a hosted sign-in headed for `target` (the OIDC
 * interaction, a SAML or forward-auth returnTo), the Two-factor page in its enrolment step when the
 * server says this person must enrol (`GET /two-factor/status`: two-factor's one enforcement rule),
 * with the target kept; null when nothing is due (or two-factor is off).
 */
export async function enrolmentStep(target: string, twoFactor: boolean): Promise<string | null> {
  if (!twoFactor) return null
  try {
    const status = await api<{ enrolmentRequired?: boolean }>('/two-factor/status')
    return status.enrolmentRequired ? pageURL('account/two-factor', { enrol: '1', returnTo: target }) : null
  } catch {
    return null
  }
}

/**
 * Where the enrolment step continues to: its returnTo when the hosted pages accept it (this
 * server's own URL under the base path, or an app behind forward auth whose host the server
 * accepts: the sign-in page's own two checks); null for anything else.
 */
export async function enrolmentReturnTo(): Promise<string | null> {
  const value = new URLSearchParams(location.search).get('returnTo')
  return safeReturnTo(value) ?? (await forwardAuthReturnTo(value))?.url ?? null
}

/** Time left until `deadline` in words, to the hour: "3 days", "1 day and 4 hours", "5 hours", "less than an hour". */
export function timeLeft(deadline: string | number, now = Date.now()): string {
  const hours = Math.round((new Date(deadline).getTime() - now) / 3_600_000)
  if (hours < 1) return 'less than an hour'
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`
  const days = Math.floor(hours / 24)
  const rest = hours % 24
  if (days === 0) return plural(rest, 'hour')
  return rest ? `${plural(days, 'day')} and ${plural(rest, 'hour')}` : plural(days, 'day')
}

/**
 * What the enrolment step asks for, as a verb phrase: the second factors that count for the
 * enforcement rule here (two-factor's `enrolmentOf`: two-factor on by an authenticator app or codes
 * by email, or a passkey), as this server offers them: "set up an authenticator app or codes by
 * email below", "… below, or add a passkey on the Passkeys page", "add a passkey on the Passkeys page".
 */
export function enrolmentChoice(offered: { totpAvailable: boolean; otp: boolean }, passkey: boolean): string {
  const here = [offered.totpAvailable ? 'an authenticator app' : null, offered.otp ? 'codes by email' : null].filter(Boolean)
  const below = here.length ? `set up ${here.join(' or ')} below` : null
  const elsewhere = passkey ? 'add a passkey on the Passkeys page' : null
  if (below && elsewhere) return `${below}, or ${elsewhere}`
  return below ?? elsewhere ?? 'set up a second factor'
}

/** The phrase at the start of a sentence. */
export const capitalised = (phrase: string): string => phrase.charAt(0).toUpperCase() + phrase.slice(1)
