import { Button, Group, Loader, Text } from '@mantine/core'
import { useEffect, useState } from 'react'
import type { PageProps } from '../page-props'
import { api, pageURL } from '../api'
import { FormAlert, Layout } from '../Layout'

interface Invitation {
  id: string
  email: string
  role: string
  status: string
  organizationName: string
  inviterEmail: string
  /** Who sent the mail, as the mail names them (a panel administrator who is no member included). */
  inviterName?: string
}

/** The sender as the invitation mail names them: "Name (email)", the name alone, or the email alone. */
function senderOf(invitation: Invitation): string {
  const name = invitation.inviterName?.trim()
  if (name && invitation.inviterEmail && name !== invitation.inviterEmail) return `${name} (${invitation.inviterEmail})`
  return name || invitation.inviterEmail || 'An administrator'
}

type State =
  | { kind: 'loading' }
  | { kind: 'signed-out' }
  | { kind: 'open'; invitation: Invitation; email: string }
  | { kind: 'done'; accepted: boolean; organizationName: string }
  | { kind: 'failed'; message: string }

/**
 * The link of an invitation mail (the default `organization.invitationURL`):
 * `/ui/accept-invitation?id=<invitationId>`. Signed out, it offers sign-in or sign-up and comes
 * back here (returnTo); signed in, it shows the organization, the inviter and the role, and
 * accepts or rejects through the organization API.
 */
export function AcceptInvitationPage({ config }: PageProps) {
  const id = new URLSearchParams(location.search).get('id') ?? ''
  const [state, setState] = useState<State>({ kind: 'loading' })
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)

  useEffect(() => {
    if (!id) {
      setState({ kind: 'failed', message: 'This invitation link is incomplete. Open the link from the invitation mail again.' })
      return
    }
    void (async () => {
      try {
        const session = await api<{ user: { email: string } } | null>('/get-session')
        if (!session) return setState({ kind: 'signed-out' })
        const invitation = await api<Invitation>(`/organization/get-invitation?id=${encodeURIComponent(id)}`)
        setState({ kind: 'open', invitation, email: session.user.email })
      } catch (e) {
        setState({ kind: 'failed', message: (e as Error).message })
      }
    })()
  }, [id])

  const answer = async (accept: boolean) => {
    if (state.kind !== 'open') return
    setBusy(true)
    setError(null)
    try {
      await api(accept ? '/organization/accept-invitation' : '/organization/reject-invitation', { invitationId: id })
      setState({ kind: 'done', accepted: accept, organizationName: state.invitation.organizationName })
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  if (state.kind === 'loading') {
    return (
      <Layout config={config} title="Invitation">
        <Loader size="sm" />
      </Layout>
    )
  }
  if (state.kind === 'failed') {
    return (
      <Layout config={config} title="Invitation">
        <FormAlert message={state.message} />
      </Layout>
    )
  }
  if (state.kind === 'signed-out') {
    const back = { returnTo: location.href }
    return (
      <Layout config={config} title="You are invited">
        <Text>Sign in, or create an account with the address the invitation was sent to, to answer it.</Text>
        <Group grow>
          <Button component="a" href={pageURL('sign-in', back)} data-testid="invitation-sign-in">
            Sign in
          </Button>
          {config.signUp ? (
            <Button component="a" variant="default" href={pageURL('sign-up', back)} data-testid="invitation-sign-up">
              Create an account
            </Button>
          ) : null}
        </Group>
      </Layout>
    )
  }
  if (state.kind === 'done') {
    return (
      <Layout config={config} title={state.accepted ? 'Invitation accepted' : 'Invitation declined'}>
        <Text data-testid="invitation-done">
          {state.accepted
            ? `You are now a member of ${state.organizationName}.`
            : `You declined the invitation to ${state.organizationName}.`}{' '}
          You can close this page.
        </Text>
      </Layout>
    )
  }
  const { invitation } = state
  return (
    <Layout config={config} title={`Join ${invitation.organizationName}`}>
      <Text data-testid="invitation-summary">
        {senderOf(invitation)} invited {invitation.email} to join {invitation.organizationName} as {invitation.role}.
      </Text>
      <FormAlert message={error} />
      <Group grow>
        <Button onClick={() => void answer(true)} loading={busy} data-testid="invitation-accept">
          Accept
        </Button>
        <Button variant="default" onClick={() => void answer(false)} disabled={busy} data-testid="invitation-reject">
          Decline
        </Button>
      </Group>
    </Layout>
  )
}
