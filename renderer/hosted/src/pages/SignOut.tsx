import { Anchor, Button, Group, Text } from '@mantine/core'
import { useRef, useState } from 'react'
import type { PageProps } from '../page-props'
import { api, basePath, pageURL } from '../api'
import { FormAlert, Layout } from '../Layout'
import { forwardAuthReturnTo, safeReturnTo } from '../return-to'

/**
 * End-session confirmation. `?action=<url>&xsrf=<token>`: the OIDC provider's confirm form
 * (accepted only on this origin under the base path); on confirm, sign out of Gatehouse, then post
 * `xsrf` and `logout=yes` to it. Without `action`: sign out of Gatehouse only. `?done=1`: signed out.
 * `?returnTo=<url>` (a protected app's "Sign out" link, issue 37 §4): after signing out, go there when
 * the sign-in page would (Gatehouse's own base path, or a forward-auth app's host); else signed out.
 */
export function SignOutPage({ config }: PageProps) {
  const params = new URLSearchParams(location.search)
  const action = safeReturnTo(params.get('action'))
  const xsrf = params.get('xsrf') ?? ''
  const [done, setDone] = useState(params.has('done'))
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(params.get('action') && !action ? 'The sign-out request is not valid.' : null)
  const form = useRef<HTMLFormElement>(null)
  const returnTo = params.get('returnTo')

  if (done) {
    return (
      <Layout config={config} title="You are signed out">
        <Text data-testid="signed-out">You are signed out of {config.appName}. You can close this page.</Text>
      </Layout>
    )
  }

  const confirm = async () => {
    setBusy(true)
    setError(null)
    // Signed in to SAML apps: Gatehouse signs out of each in turn (front channel), then ends the session.
    if (!action) {
      const saml = await api<{ count: number; logoutPath: string }>('/saml/session-apps').catch(() => null)
      if (saml && saml.count > 0) {
        location.href = `${basePath}${saml.logoutPath}?returnTo=${encodeURIComponent(pageURL('sign-out', { done: '1' }))}`
        return
      }
    }
    try {
      await api('/sign-out', {})
    } catch (e) {
      // No session any more is what was asked for; anything else is shown.
      if ((e as { status?: number }).status !== 401) {
        setError((e as Error).message)
        setBusy(false)
        return
      }
    }
    if (action && form.current) form.current.submit()
    else if (returnTo) {
      const target = safeReturnTo(returnTo) ?? (await forwardAuthReturnTo(returnTo))?.url
      if (target) location.assign(target)
      else {
        setDone(true)
        setBusy(false)
      }
    } else {
      setDone(true)
      setBusy(false)
    }
  }

  return (
    <Layout config={config} title="Sign out">
      <Text>Do you want to sign out of {config.appName}?</Text>
      <FormAlert message={error} />
      {action ? (
        <form ref={form} method="post" action={action} hidden>
          <input type="hidden" name="xsrf" value={xsrf} />
          <input type="hidden" name="logout" value="yes" />
        </form>
      ) : null}
      <Button onClick={() => void confirm()} loading={busy} fullWidth>
        Sign out
      </Button>
      <Group gap="lg" justify="center">
        <Anchor href={pageURL('account')} size="sm" data-testid="account-link">
          Your account
        </Anchor>
        <Anchor href={pageURL('account/apps')} size="sm" data-testid="connected-apps-link">
          Connected apps
        </Anchor>
      </Group>
    </Layout>
  )
}
