import { Anchor, Button, Loader, Text } from '@mantine/core'
import { useEffect, useState } from 'react'
import type { PageProps } from '../page-props'
import { api, pageURL } from '../api'
import { enrolmentStep } from '../enrolment'
import { errorsOf } from '../errors'
import { FormAlert, Layout } from '../Layout'
import { returnToParam } from '../return-to'
import { keepReturnTo, useForwardAuthApp } from './SignIn'

const LINK_ERRORS: Record<string, string> = {
  invalid_token: 'The verification link is invalid.',
  token_expired: 'The verification link has expired.',
  user_not_found: 'The account of this link no longer exists.',
}

/** The marker the sign-up page puts in its callbackURL: GET /verify-email redirects there only after verifying. */
export const VERIFIED_MARKER = { verified: '1' }

type State =
  | { kind: 'verified' }
  | { kind: 'failed'; message: string }
  /** No link was followed: nothing was verified here. `email` is the signed-in, unverified address. */
  | { kind: 'no-link'; email: string | null }

interface SessionAnswer {
  user: { email: string; emailVerified: boolean }
}

/**
 * The landing page of the verification mail. GET /verify-email redirects here (its callbackURL,
 * with `verified=1` from the sign-up page) after verifying, with `?error=` on failure; an app that
 * links here with `?token=` directly gets the token verified by this page. Opened bare, it says
 * nothing was verified (unless the signed-in account is verified) and offers a new link.
 */
export function VerifyEmailPage({ config }: PageProps) {
  const params = new URLSearchParams(location.search)
  const token = params.get('token')
  const linkError = params.get('error')
  const marked = params.get('verified') === '1'
  const [state, setState] = useState<State | null>(
    linkError && !token ? { kind: 'failed', message: LINK_ERRORS[linkError] ?? `The link could not be used (${linkError}).` } : null,
  )
  const [session, setSession] = useState<SessionAnswer | null | undefined>(undefined)
  const [sent, setSent] = useState(false)
  const [sendError, setSendError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  // Sent here by forward auth (identity.requireVerifiedEmail): the app's URL, once the server accepted its host.
  const forwardApp = useForwardAuthApp()
  const next = returnToParam() ?? forwardApp?.url ?? null
  // Verified and signed in (better-auth's autoSignInAfterVerification, or already): Continue passes
  // through the enrolment step first when this person must enrol (issue 49 §10), as a sign-in does.
  const [continueTo, setContinueTo] = useState<string | null>(null)
  useEffect(() => {
    if (state?.kind !== 'verified' || !next) return
    let live = true
    void (async () => {
      const signedIn = await api<SessionAnswer | null>('/get-session').catch(() => null)
      const step = signedIn?.user ? await enrolmentStep(next, config.twoFactor) : null
      if (live) setContinueTo(step ?? next)
    })()
    return () => {
      live = false
    }
  }, [state?.kind, next, config.twoFactor])

  useEffect(() => {
    // The session says whose address a new link would go to (and, bare, whether it is verified).
    api<SessionAnswer | null>('/get-session')
      .then((s) => setSession(s?.user ? s : null))
      .catch(() => setSession(null))
  }, [])

  useEffect(() => {
    if (token) {
      api(`/verify-email?token=${encodeURIComponent(token)}`)
        .then(() => setState({ kind: 'verified' }))
        .catch((e: unknown) => {
          const code = (e as { code?: string }).code?.toLowerCase() ?? ''
          setState({ kind: 'failed', message: LINK_ERRORS[code] ?? errorsOf(e).form ?? 'The link could not be used.' })
        })
      return
    }
    if (linkError || session === undefined) return
    // Bare: the server is the judge when someone is signed in; the redirect's marker otherwise.
    if (session) setState(session.user.emailVerified ? { kind: 'verified' } : { kind: 'no-link', email: session.user.email })
    else setState(marked ? { kind: 'verified' } : { kind: 'no-link', email: null })
  }, [token, linkError, session, marked])

  if (!state) {
    return (
      <Layout config={config} title="Verifying your email">
        <Loader aria-label="Verifying" />
      </Layout>
    )
  }

  const resend = async () => {
    if (!session || session.user.emailVerified) return
    setBusy(true)
    setSendError(null)
    try {
      await api('/send-verification-email', {
        email: session.user.email,
        callbackURL: pageURL('verify-email', { ...(next ? { returnTo: next } : {}), ...VERIFIED_MARKER }),
      })
      setSent(true)
    } catch (e) {
      setSendError(errorsOf(e).form ?? 'The link could not be sent.')
    } finally {
      setBusy(false)
    }
  }
  const canResend = session && !session.user.emailVerified
  const continueLink = next ? (
    <Anchor href={continueTo ?? next} data-testid="verified-continue">
      Continue
    </Anchor>
  ) : (
    <Anchor href={pageURL('sign-in', keepReturnTo())}>Go to sign-in</Anchor>
  )
  const newLink = sent ? (
    <Text role="status" data-testid="verification-sent">
      We sent a new link to {session?.user.email}. Follow it to confirm your address.
    </Text>
  ) : canResend ? (
    <>
      <FormAlert message={sendError} />
      <Button onClick={resend} loading={busy}>
        Send a new verification link
      </Button>
    </>
  ) : (
    <Text size="sm">Sign in to have a new link sent to your address.</Text>
  )

  if (state.kind === 'verified') {
    return (
      <Layout config={config} title="Email verified">
        <Text data-testid="email-verified">Your email address is confirmed. Thank you.</Text>
        {continueLink}
      </Layout>
    )
  }
  if (state.kind === 'failed') {
    return (
      <Layout config={config} title="Email not verified">
        <FormAlert message={state.message} />
        {newLink}
        {continueLink}
      </Layout>
    )
  }
  return (
    <Layout config={config} title="Verify your email">
      <Text data-testid="no-verification-link">
        {state.email
          ? `Your address ${state.email} is not verified yet. Open the link in the verification mail we sent you.`
          : 'This page confirms an email address when you open it from the link in a verification mail. Open that link to verify your address.'}
      </Text>
      {newLink}
      {continueLink}
    </Layout>
  )
}
