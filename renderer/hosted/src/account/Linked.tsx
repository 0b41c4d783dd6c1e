import { Badge, Button, Card, Group, Stack, Text } from '@mantine/core'
import { useCallback, useEffect, useState } from 'react'
import { api, pageURL, type PublicConfig } from '../api'
import type { PageProps } from '../page-props'
import { AccountPage, FocusedAlert, when } from './common'
import type { LinkedAccount } from './Overview'

/**
 * "Linked accounts" (`/ui/account/linked`): each sign-in provider this server offers (social and
 * generic OAuth), linked or not. Link (POST /link-social: the provider's page, then back here) and
 * unlink (POST /unlink-account), never the last way in: without a password or a passkey, the only
 * linked provider cannot be unlinked (the server refuses it too).
 */
export function AccountLinkedPage({ config }: PageProps) {
  return (
    <AccountPage config={config} title="Linked accounts">
      {() => <LinkedBody config={config} />}
    </AccountPage>
  )
}

function LinkedBody({ config }: { config: PublicConfig }) {
  const [accounts, setAccounts] = useState<LinkedAccount[] | null>(null)
  const [passkeys, setPasskeys] = useState(0)
  const [error, setError] = useState<string | null>(
    new URLSearchParams(location.search).get('error') ? 'The account was not linked.' : null,
  )
  const [notice, setNotice] = useState<string | null>(null)
  const [busy, setBusy] = useState<string | null>(null)

  const load = useCallback(
    () =>
      Promise.all([
        api<LinkedAccount[]>('/list-accounts')
          .then(setAccounts)
          .catch((e: unknown) => setError((e as Error).message)),
        config.passkey
          ? api<unknown[]>('/passkey/list-user-passkeys')
              .then((list) => setPasskeys(list.length))
              .catch(() => setPasskeys(0))
          : null,
      ]),
    [config.passkey],
  )
  useEffect(() => void load(), [load])

  const link = async (provider: string) => {
    setBusy(provider)
    setError(null)
    try {
      const here = pageURL('account/linked')
      const answer = await api<{ url?: string }>('/link-social', {
        provider,
        callbackURL: here,
        errorCallbackURL: pageURL('account/linked', { error: '1' }),
      })
      if (answer.url) location.assign(answer.url)
      else await load()
    } catch (e) {
      setError((e as Error).message)
      setBusy(null)
    }
  }

  const unlink = async (account: LinkedAccount, name: string) => {
    setBusy(account.providerId)
    setError(null)
    setNotice(null)
    try {
      await api('/unlink-account', { providerId: account.providerId, accountId: account.accountId })
      await load()
      setNotice(`${name} is no longer linked.`)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(null)
    }
  }

  if (!accounts) return <FocusedAlert message={error} />
  const hasPassword = accounts.some((a) => a.providerId === 'credential')
  const linkedCount = accounts.filter((a) => a.providerId !== 'credential').length
  // The last way in stays: no password, no passkey, one linked provider.
  const lastWayIn = !hasPassword && passkeys === 0 && linkedCount <= 1
  const nameOf = (id: string) => config.socialProviders.find((p) => p.id === id)?.name ?? id
  const providerIds = [
    ...config.socialProviders.map((p) => p.id),
    ...accounts.map((a) => a.providerId).filter((id) => id !== 'credential' && !config.socialProviders.some((p) => p.id === id)),
  ]
  return (
    <Stack gap="md">
      <Text size="sm" c="dimmed">
        Sign in with another account you have (a provider your administrator set up) instead of your password.
      </Text>
      {notice ? (
        <Text role="status" data-testid="linked-notice">
          {notice}
        </Text>
      ) : null}
      <FocusedAlert message={error} />
      {providerIds.length === 0 ? <Text data-testid="no-providers">This server offers no other way to sign in.</Text> : null}
      <Stack gap="sm" data-testid="providers">
        {providerIds.map((id) => {
          const linked = accounts.filter((a) => a.providerId === id)
          const name = nameOf(id)
          return (
            <Card key={id} withBorder padding="sm" data-testid={`provider-${id}`}>
              <Group justify="space-between" align="flex-start" wrap="nowrap">
                <Stack gap={2}>
                  <Group gap="xs">
                    <Text fw={600}>{name}</Text>
                    {linked.length > 0 ? (
                      <Badge color="teal" variant="light">
                        Linked
                      </Badge>
                    ) : null}
                  </Group>
                  {linked.map((a) => (
                    <Text key={a.id} size="xs" c="dimmed">
                      Linked {when(a.createdAt)}
                    </Text>
                  ))}
                </Stack>
                {linked.length === 0 ? (
                  config.socialProviders.some((p) => p.id === id) ? (
                    <Button size="xs" loading={busy === id} onClick={() => void link(id)} aria-label={`Link ${name}`}>
                      Link
                    </Button>
                  ) : null
                ) : (
                  <Stack gap={2} align="flex-end">
                    {linked.map((a) => (
                      <Button
                        key={a.id}
                        size="xs"
                        color="red"
                        variant="outline"
                        loading={busy === id}
                        disabled={lastWayIn}
                        onClick={() => void unlink(a, name)}
                        aria-label={`Unlink ${name}`}
                        aria-describedby={lastWayIn ? 'last-way-in' : undefined}
                      >
                        Unlink
                      </Button>
                    ))}
                  </Stack>
                )}
              </Group>
            </Card>
          )
        })}
      </Stack>
      {lastWayIn && linkedCount > 0 ? (
        <Text size="sm" id="last-way-in" data-testid="last-way-in">
          This is the only way you sign in: set a password or add a passkey before you unlink it.
        </Text>
      ) : null}
    </Stack>
  )
}
