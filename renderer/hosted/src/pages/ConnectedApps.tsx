import { Anchor, Button, Card, Group, Image, List, Loader, Stack, Text } from '@mantine/core'
import { useCallback, useEffect, useState } from 'react'
import type { PageProps } from '../page-props'
import { ApiError, api, pageURL } from '../api'
import { FormAlert, Layout } from '../Layout'
import { SCOPES } from './Consent'
import { BackToAccount } from '../account/common'

/** GET {basePath}/oidc/connected-apps: the applications the signed-in person has allowed. */
interface ConnectedApp {
  clientId: string
  name: string
  logo: string | null
  scopes: string[]
  claims: string[]
  grantedAt: number
}

/** GET {basePath}/saml/apps: the SAML applications the person may open from here. */
interface SamlApp {
  entityId: string
  name: string
  url: string
}

/**
 * "Connected apps" (`/ui/account/apps`): every application the person allowed to sign them in,
 * with what each may see, and Revoke: the application's tokens stop working at once and the
 * next sign-in to it asks again.
 */
export function ConnectedAppsPage({ config }: PageProps) {
  const [apps, setApps] = useState<ConnectedApp[] | null>(null)
  const [signedOut, setSignedOut] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState<string | null>(null)

  const load = useCallback(() => {
    api<{ apps: ConnectedApp[] }>('/oidc/connected-apps')
      .then((answer) => setApps(answer.apps))
      .catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 401) setSignedOut(true)
        // The OIDC provider is off: no application can hold a grant; SAML apps and app passwords remain.
        else if (e instanceof ApiError && e.status === 404) setApps([])
        else setError((e as Error).message)
      })
  }, [])
  useEffect(load, [load])

  // SAML applications the person may open (IdP-initiated sign-in); absent while SAML is off.
  const [samlApps, setSamlApps] = useState<SamlApp[]>([])
  useEffect(() => {
    api<{ apps: SamlApp[] }>('/saml/apps')
      .then((answer) => setSamlApps(answer.apps))
      .catch(() => setSamlApps([]))
  }, [])

  const revoke = async (clientId: string) => {
    setBusy(clientId)
    setError(null)
    try {
      await api('/oidc/connected-apps/revoke', { clientId })
      setApps((current) => (current ?? []).filter((a) => a.clientId !== clientId))
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(null)
    }
  }

  if (signedOut) {
    return (
      <Layout config={config} title="Connected apps">
        <Text>
          <Anchor href={pageURL('sign-in', { returnTo: location.href })}>Sign in</Anchor> to see the applications connected to your account.
        </Text>
      </Layout>
    )
  }
  return (
    <Layout config={config} title="Connected apps">
      <Text size="sm" c="dimmed">
        Applications you allowed to sign you in with your {config.appName} account, and what each may see.
      </Text>
      <FormAlert message={error} />
      {apps === null && !error ? (
        <Group justify="center">
          <Loader size="sm" />
        </Group>
      ) : null}
      {apps?.length === 0 ? <Text data-testid="no-apps">No application is connected to your account.</Text> : null}
      <Stack gap="sm" data-testid="connected-apps">
        {(apps ?? []).map((app) => (
          <Card key={app.clientId} withBorder padding="sm" data-testid={`app-${app.clientId}`}>
            <Group justify="space-between" align="flex-start" wrap="nowrap">
              <Group gap="sm" align="flex-start" wrap="nowrap">
                {app.logo ? <Image src={app.logo} alt="" w={32} h={32} fit="contain" /> : null}
                <Stack gap={2}>
                  <Text fw={600}>{app.name}</Text>
                  <List size="sm">
                    {app.scopes.map((scope) => (
                      <List.Item key={scope}>{SCOPES[scope] ?? scope}</List.Item>
                    ))}
                    {app.claims.length > 0 ? <List.Item>{app.claims.join(', ')}</List.Item> : null}
                  </List>
                </Stack>
              </Group>
              <Button
                color="red"
                variant="light"
                size="xs"
                loading={busy === app.clientId}
                onClick={() => void revoke(app.clientId)}
                data-testid={`revoke-${app.clientId}`}
              >
                Revoke
              </Button>
            </Group>
          </Card>
        ))}
      </Stack>
      {samlApps.length > 0 ? (
        <Stack gap="xs" data-testid="saml-apps">
          <Text fw={600}>SAML applications</Text>
          {samlApps.map((app) => (
            <Card key={app.entityId} withBorder padding="sm">
              <Group justify="space-between" wrap="nowrap">
                <Text>{app.name}</Text>
                <Button component="a" href={app.url} size="xs" variant="filled" data-testid={`open-${app.name}`}>
                  Open
                </Button>
              </Group>
            </Card>
          ))}
        </Stack>
      ) : null}
      <Text size="sm" data-testid="app-passwords-link">
        A device or app that cannot show this sign-in page (a NAS, a mail client) uses an{' '}
        <Anchor href={pageURL('account/app-passwords')}>app password</Anchor> instead.
      </Text>
      <BackToAccount />
    </Layout>
  )
}
