import { Button, Group, Image, List, Loader, Text } from '@mantine/core'
import { useEffect, useState } from 'react'
import type { PageProps } from '../page-props'
import { ApiError, api } from '../api'
import { FormAlert, Layout } from '../Layout'
import { safeReturnTo } from '../return-to'

/** GET {basePath}/oidc/interaction/<uid> (Accept: application/json): the OIDC feature's interaction. */
interface Interaction {
  uid: string
  prompt: 'login' | 'consent'
  client: { clientId: string; name: string | null; logo: string | null }
  scopes: string[]
}

export const SCOPES: Record<string, string> = {
  openid: 'Confirm who you are',
  profile: 'Your name, username and picture',
  email: 'Your email address and whether it is verified',
  groups: 'The organizations and teams you belong to',
  offline_access: 'Stay connected when you are not using it',
}

export function ConsentPage({ config }: PageProps) {
  const uid = new URLSearchParams(location.search).get('interaction') ?? ''
  const [interaction, setInteraction] = useState<Interaction | null>(null)
  const [error, setError] = useState<string | null>(uid ? null : 'This page needs an interaction. Start again from the application.')
  const [busy, setBusy] = useState<'consent' | 'abort' | null>(null)

  useEffect(() => {
    if (!uid) return
    api<Interaction>(`/oidc/interaction/${encodeURIComponent(uid)}`)
      .then(setInteraction)
      .catch((e: unknown) =>
        setError(
          e instanceof ApiError && e.status === 404
            ? 'This sign-in request has expired. Start again from the application.'
            : (e as Error).message,
        ),
      )
  }, [uid])

  const decide = async (decision: 'consent' | 'abort') => {
    setBusy(decision)
    setError(null)
    try {
      const answer = await api<{ redirectTo: string }>(`/oidc/interaction/${encodeURIComponent(uid)}/${decision}`, {})
      // The provider continues on its own endpoints (same origin, under the base path).
      const target = safeReturnTo(answer.redirectTo)
      if (!target) throw new Error('The server answered with an unexpected address.')
      location.assign(target)
    } catch (e) {
      setError((e as Error).message)
      setBusy(null)
    }
  }

  if (!interaction) {
    return (
      <Layout config={config} title="Allow access">
        {error ? <FormAlert message={error} /> : <Loader aria-label="Loading" />}
      </Layout>
    )
  }
  const name = interaction.client.name || interaction.client.clientId
  return (
    <Layout config={config} title={`Allow ${name}?`}>
      {interaction.client.logo ? <Image src={interaction.client.logo} alt={`${name} logo`} h={48} w="auto" fit="contain" /> : null}
      <Text>
        <strong>{name}</strong> asks to use your {config.appName} account. It will receive:
      </Text>
      <List spacing="xs" data-testid="scopes">
        {interaction.scopes.map((scope) => (
          <List.Item key={scope}>{SCOPES[scope] ?? scope}</List.Item>
        ))}
      </List>
      <FormAlert message={error} />
      <Group grow>
        <Button variant="default" onClick={() => void decide('abort')} loading={busy === 'abort'} disabled={busy !== null}>
          Deny
        </Button>
        <Button onClick={() => void decide('consent')} loading={busy === 'consent'} disabled={busy !== null}>
          Allow
        </Button>
      </Group>
    </Layout>
  )
}
