import { Badge, Button, Card, Group, Stack, Text } from '@mantine/core'
import { useCallback, useEffect, useState } from 'react'
import { api } from '../api'
import type { PageProps } from '../page-props'
import { type AccountSession, AccountPage, FocusedAlert, when } from './common'
import { deviceOf } from './user-agent'

/** `GET /list-sessions`: the person's sessions (better-auth's session rows). */
interface SessionRow {
  id: string
  token: string
  createdAt: string
  updatedAt: string
  expiresAt: string
  ipAddress?: string | null
  userAgent?: string | null
}

/**
 * "Sessions" (`/ui/account/sessions`): every place the person is signed in, with the device (from
 * its user agent), the address, when it started and was last active, "this device"; sign out one
 * (POST /revoke-session) or every other (POST /revoke-other-sessions).
 */
export function AccountSessionsPage({ config }: PageProps) {
  return (
    <AccountPage config={config} title="Sessions">
      {(current) => <SessionsBody current={current} />}
    </AccountPage>
  )
}

function SessionsBody({ current }: { current: AccountSession }) {
  const [rows, setRows] = useState<SessionRow[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)

  const load = useCallback(() => {
    return api<SessionRow[]>('/list-sessions')
      .then((list) =>
        // This device first, then the most recently active.
        setRows(
          [...list].sort(
            (a, b) =>
              Number(b.token === current.session.token) - Number(a.token === current.session.token) ||
              Date.parse(b.updatedAt) - Date.parse(a.updatedAt),
          ),
        ),
      )
      .catch((e: unknown) => setError((e as Error).message))
  }, [current.session.token])
  useEffect(() => void load(), [load])

  const revoke = async (row: SessionRow) => {
    setBusy(row.id)
    setError(null)
    setNotice(null)
    try {
      await api('/revoke-session', { token: row.token })
      await load()
      setNotice(`Signed out of ${deviceOf(row.userAgent)}.`)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(null)
    }
  }

  const revokeOthers = async () => {
    setBusy('others')
    setError(null)
    setNotice(null)
    try {
      await api('/revoke-other-sessions', {})
      await load()
      setNotice('Signed out of every other device.')
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(null)
    }
  }

  const others = (rows ?? []).filter((r) => r.token !== current.session.token).length
  return (
    <Stack gap="md">
      <Text size="sm" c="dimmed">
        Where your account is signed in. Sign out of a device you do not recognise, then change your password.
      </Text>
      {notice ? (
        <Text role="status" data-testid="sessions-notice">
          {notice}
        </Text>
      ) : null}
      <FocusedAlert message={error} />
      <Stack gap="sm" data-testid="sessions">
        {(rows ?? []).map((row) => {
          const mine = row.token === current.session.token
          const device = deviceOf(row.userAgent)
          return (
            <Card key={row.id} withBorder padding="sm" data-testid={`session-${row.id}`}>
              <Group justify="space-between" align="flex-start" wrap="nowrap">
                <Stack gap={2}>
                  <Group gap="xs">
                    <Text fw={600}>{device}</Text>
                    {mine ? (
                      <Badge color="teal" variant="light">
                        This device
                      </Badge>
                    ) : null}
                  </Group>
                  <Text size="xs" c="dimmed">
                    {row.ipAddress ? `From ${row.ipAddress}` : 'Address unknown'}
                  </Text>
                  <Text size="xs" c="dimmed">
                    Signed in {when(row.createdAt)} · last active {when(row.updatedAt)}
                  </Text>
                </Stack>
                {mine ? null : (
                  <Button
                    color="red"
                    variant="outline"
                    size="xs"
                    loading={busy === row.id}
                    onClick={() => void revoke(row)}
                    aria-label={`Sign out ${device}, signed in ${when(row.createdAt)}`}
                  >
                    Sign out
                  </Button>
                )}
              </Group>
            </Card>
          )
        })}
      </Stack>
      {others > 0 ? (
        <Button
          color="red"
          variant="outline"
          onClick={() => void revokeOthers()}
          loading={busy === 'others'}
          style={{ alignSelf: 'flex-start' }}
        >
          Sign out every other device
        </Button>
      ) : rows ? (
        <Text size="sm" data-testid="no-other-sessions">
          You are signed in on this device only.
        </Text>
      ) : null}
    </Stack>
  )
}
