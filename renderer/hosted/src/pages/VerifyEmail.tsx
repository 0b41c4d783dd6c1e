import { Anchor, Loader, Text } from '@mantine/core'
import { useEffect, useState } from 'react'
import type { PageProps } from '../App'
import { api, pageURL } from '../api'
import { errorsOf } from '../errors'
import { FormAlert, Layout } from '../Layout'
import { returnToParam } from '../return-to'
import { keepReturnTo } from './SignIn'

const LINK_ERRORS: Record<string, string> = {
  invalid_token: 'The verification link is invalid. Ask for a new one from the application.',
  token_expired: 'The verification link has expired. Ask for a new one from the application.',
  user_not_found: 'The account of this link no longer exists.',
}

/**
 * The landing page of the verification mail. GET /verify-email redirects here (its callbackURL)
 * after verifying, with `?error=` on failure; an app that links here with `?token=` directly gets
 * the token verified by this page.
 */
export function VerifyEmailPage({ config }: PageProps) {
  const params = new URLSearchParams(location.search)
  const token = params.get('token')
  const linkError = params.get('error')
  const [state, setState] = useState<{ ok: boolean; message: string | null } | null>(
    token
      ? null
      : linkError
        ? { ok: false, message: LINK_ERRORS[linkError] ?? `The link could not be used (${linkError}).` }
        : { ok: true, message: null },
  )

  useEffect(() => {
    if (!token) return
    api(`/verify-email?token=${encodeURIComponent(token)}`)
      .then(() => setState({ ok: true, message: null }))
      .catch((e: unknown) => {
        const code = (e as { code?: string }).code?.toLowerCase() ?? ''
        setState({ ok: false, message: LINK_ERRORS[code] ?? errorsOf(e).form })
      })
  }, [token])

  if (!state) {
    return (
      <Layout config={config} title="Verifying your email">
        <Loader aria-label="Verifying" />
      </Layout>
    )
  }
  const next = returnToParam()
  return (
    <Layout config={config} title={state.ok ? 'Email verified' : 'Email not verified'}>
      {state.ok ? (
        <Text data-testid="email-verified">Your email address is confirmed. Thank you.</Text>
      ) : (
        <FormAlert message={state.message} />
      )}
      {next ? <Anchor href={next}>Continue</Anchor> : <Anchor href={pageURL('sign-in', keepReturnTo())}>Go to sign-in</Anchor>}
    </Layout>
  )
}
