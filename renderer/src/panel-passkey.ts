import { startAuthentication, startRegistration } from '@simplewebauthn/browser'
import { useQuery } from '@tanstack/react-query'
import { panelAuth } from './api'

/**
 * Passkeys on the browser panel (issue 31). WebAuthn binds a passkey to a relying-party id, a host
 * name: the panel's page at http://127.0.0.1:PORT can use none (an IP address is never one), the
 * same page at http://localhost:PORT can. The ceremonies go through the panel's sign-in relay
 * (/panel/auth/passkey/…, the API's own endpoints in-process), which binds them to this page's
 * origin and host name when the API's relying-party id cannot be used here
 * (server/features/passkey/service.ts rpIdOf); the sign-in then ends in the same sign-in pipeline
 * and panel session as a password.
 */

export interface SignInOptions {
  passkey: boolean
  /** http://localhost:PORT, where passkeys work. */
  passkeyOrigin: string
}

/** What the sign-in page offers (public, from the panel listener). */
export function useSignInOptions() {
  return useQuery<SignInOptions | null>({
    queryKey: ['panel-sign-in-options'],
    queryFn: async () => {
      const res = await fetch('./panel/sign-in-options', { credentials: 'same-origin' })
      return res.ok ? ((await res.json()) as SignInOptions) : null
    },
    staleTime: 60_000,
    retry: false,
  })
}

/** Whether this page may run passkey ceremonies (a name, not an IP address, and WebAuthn in the browser). */
export const passkeysWorkHere = (): boolean =>
  typeof window.PublicKeyCredential === 'function' && !/^(\d+\.){3}\d+$|^\[/.test(window.location.hostname)

const messageOf = (body: Record<string, unknown> | null, fallback: string): string =>
  typeof body?.message === 'string' ? body.message : fallback

/** Signs in with a passkey of this browser: null when done, else why not. */
export async function signInWithPasskey(): Promise<string | null> {
  const options = await panelAuth('passkey/generate-authenticate-options')
  if (options.status !== 200 || !options.body) return messageOf(options.body, 'Passkeys are not available')
  let response: Awaited<ReturnType<typeof startAuthentication>>
  try {
    response = await startAuthentication({ optionsJSON: options.body as never })
  } catch {
    return 'The passkey sign-in was cancelled or did not complete. Try again.'
  }
  const answer = await panelAuth('passkey/verify-authentication', { response })
  return answer.status === 200 ? null : messageOf(answer.body, `Sign-in failed (${answer.status})`)
}

/** The name a passkey added from the panel gets, so its owner recognises it in their passkey list. */
export const panelPasskeyName = (): string => `Gatehouse panel (${window.location.host})`

/** Adds a passkey of this browser to the signed-in admin's account, for this panel: null when done, else why not. */
export async function addPanelPasskey(): Promise<string | null> {
  const options = await panelAuth('passkey/generate-register-options')
  if (options.status !== 200 || !options.body) return messageOf(options.body, 'A passkey cannot be added now')
  let response: Awaited<ReturnType<typeof startRegistration>>
  try {
    response = await startRegistration({ optionsJSON: options.body as never })
  } catch {
    return 'Adding the passkey was cancelled or did not complete.'
  }
  const answer = await panelAuth('passkey/verify-registration', { response, name: panelPasskeyName() })
  return answer.status === 200 ? null : messageOf(answer.body, `The passkey was not saved (${answer.status})`)
}
