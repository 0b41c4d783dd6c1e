import { Anchor, Group, Loader, Text } from '@mantine/core'
import { type ReactNode, type RefObject, useCallback, useEffect, useRef, useState } from 'react'
import type { PublicConfig } from '../api'
import { ApiError, api, pageURL } from '../api'
import { FormAlert, Layout } from '../Layout'

/** The signed-in person as `GET /get-session` answers (better-auth's user, with the columns features add). */
export interface AccountUser {
  id: string
  name: string
  email: string
  emailVerified: boolean
  image?: string | null
  username?: string | null
  displayUsername?: string | null
  twoFactorEnabled?: boolean | null
  createdAt: string
}

export interface AccountSession {
  session: { id: string; token: string; createdAt: string; updatedAt: string; expiresAt: string }
  user: AccountUser
}

/** `GET /get-session` (null when signed out), fresh from the database (the account pages show what is true now). */
export function useAccountSession(): {
  current: AccountSession | null | undefined
  error: string | null
  reload: () => void
} {
  const [current, setCurrent] = useState<AccountSession | null | undefined>(undefined)
  const [error, setError] = useState<string | null>(null)
  const reload = useCallback(() => {
    api<AccountSession | null>('/get-session?disableCookieCache=true')
      .then((answer) => setCurrent(answer?.user ? answer : null))
      .catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 401) setCurrent(null)
        else setError((e as Error).message)
      })
  }, [])
  useEffect(reload, [reload])
  return { current, error, reload }
}

/** A date and time in the reader's locale. */
export const when = (value: string | number | Date): string =>
  new Date(value).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })

/** "Back to your account" at the top of every account page but the overview. */
export function BackToAccount() {
  return (
    <Text size="sm">
      <Anchor href={pageURL('account')} data-testid="back-to-account">
        Back to your account
      </Anchor>
    </Text>
  )
}

/**
 * One account page: the hosted layout, "back to your account", and the states every page shares
 * (loading, signed out with a link to sign in and come back, the session could not be read). The
 * page itself is drawn once the person is known.
 */
export function AccountPage({
  config,
  title,
  overview = false,
  children,
}: {
  config: PublicConfig
  title: string
  overview?: boolean
  children: (current: AccountSession, reload: () => void) => ReactNode
}) {
  const { current, error, reload } = useAccountSession()
  return (
    <Layout config={config} title={title}>
      {overview ? null : <BackToAccount />}
      <FormAlert message={error} />
      {current === undefined && !error ? (
        <Group justify="center">
          <Loader size="sm" aria-label="Loading" />
        </Group>
      ) : null}
      {current === null ? (
        <Text data-testid="signed-out">
          <Anchor href={pageURL('sign-in', { returnTo: location.href })}>Sign in</Anchor> to manage your {config.appName} account.
        </Text>
      ) : null}
      {current ? children(current, reload) : null}
    </Layout>
  )
}

/**
 * A refusal that concerns no single field, announced (role=alert) and focused, so a keyboard or
 * screen-reader user lands on it (FormAlert's heading is "Could not continue").
 */
export function FocusedAlert({ message }: { message: string | null }) {
  const ref = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (message) ref.current?.focus()
  }, [message])
  if (!message) return null
  return (
    <div ref={ref} tabIndex={-1} data-testid="form-alert">
      <FormAlert message={message} />
    </div>
  )
}

/**
 * Returns a function that asks for focus on the first field of `form` marked aria-invalid. The
 * request is state, so the focus moves in an effect after React committed the render that marks
 * the field (and re-enabled it); a requestAnimationFrame could run before that commit on a busy or
 * headless browser and focus nothing.
 */
export function useFocusFirstInvalid(form: RefObject<HTMLFormElement | null>): () => void {
  const [requests, setRequests] = useState(0)
  useEffect(() => {
    if (requests > 0) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus()
  }, [requests, form])
  return useCallback(() => setRequests((n) => n + 1), [])
}
