import { Badge, Card, Group, Stack, Text } from '@mantine/core'
import { useEffect, useState } from 'react'
import { api } from '../api'
import type { PageProps } from '../page-props'
import { AccountPage, FocusedAlert, when } from './common'
import { deviceOf } from './user-agent'

/** `GET /audit/own-events` (server/features/audit/routes.ts). */
interface OwnEvent {
  id: number
  type: string
  outcome: 'success' | 'failure'
  createdAt: string
  ipAddress: string | null
  userAgent: string | null
  method: string | null
  byAnother: boolean
}

/** What each kind of entry means to the person; other kinds show their name. */
const LABELS: Record<string, [success: string, failure: string]> = {
  'user.sign-in': ['Signed in', 'Sign-in refused'],
  'passkey.sign-in': ['Signed in with a passkey', 'Passkey sign-in refused'],
  'user.sign-out': ['Signed out', 'Sign-out failed'],
  'user.sign-up': ['Account created', 'Sign-up refused'],
  'user.updated': ['Profile changed', 'Profile change refused'],
  'user.password-changed': ['Password changed', 'Password change refused (wrong current password)'],
  'user.password-reset': ['Password reset by link', 'Password reset refused'],
  'user.password-reset-requested': ['Password reset link requested', 'Password reset link refused'],
  'user.password-set': ['Password set', 'Password not set'],
  'user.email-change-requested': ['Email change requested', 'Email change refused'],
  'user.email-changed': ['Email address changed', 'Email change refused'],
  'user.email-verified': ['Email address verified', 'Email verification refused'],
  'user.verification-email-sent': ['Verification link sent', 'Verification link not sent'],
  'two-factor.enabled': ['Two-factor authentication turned on', 'Two-factor set-up refused'],
  'two-factor.enrolment-started': ['Authenticator app set-up started', 'Authenticator app set-up refused (wrong password)'],
  'two-factor.disabled': ['Two-factor authentication turned off', 'Turning off two-factor refused (wrong password)'],
  'two-factor.backup-codes-generated': ['New backup codes made', 'New backup codes refused (wrong password)'],
  'two-factor.backup-code-used': ['Backup code used', 'Backup code refused'],
  'two-factor.verify': ['Second factor passed', 'Second factor code refused'],
  'two-factor.reset': ['Two-factor reset by an administrator', 'Two-factor reset failed'],
  'two-factor.device-trusted': ['Browser trusted (no code asked for a while)', 'Browser not trusted'],
  'two-factor.trusted-device-forgotten': ['Trusted browser forgotten', 'Trusted browser not forgotten'],
  'passkey.registered': ['Passkey added', 'Passkey not added'],
  'passkey.renamed': ['Passkey renamed', 'Passkey not renamed'],
  'passkey.removed': ['Passkey removed', 'Passkey not removed'],
  'passkey.deleted': ['Passkey removed', 'Passkey not removed'],
  'app-password.created': ['App password created', 'App password refused'],
  'app-password.revoked': ['App password revoked', 'App password not revoked'],
  'session.revoked': ['A session was signed out', 'Session sign-out failed'],
  'session.revoked-others': ['Other devices signed out', 'Signing out other devices failed'],
  'session.revoked-all': ['Every device signed out', 'Signing out every device failed'],
  'account.linked': ['Account linked', 'Account link refused'],
  'account.unlinked': ['Account unlinked', 'Account unlink refused'],
}

const labelOf = (e: OwnEvent): string => LABELS[e.type]?.[e.outcome === 'success' ? 0 : 1] ?? `${e.type} (${e.outcome})`

/**
 * "Activity" (`/ui/account/activity`): the person's own audit entries of the last 30 days, newest
 * first: sign-ins and refusals with method, device and address; changes to password, email,
 * factors and app passwords. Something they do not recognise is where they change their password.
 */
export function AccountActivityPage({ config }: PageProps) {
  return (
    <AccountPage config={config} title="Activity">
      {() => <ActivityBody />}
    </AccountPage>
  )
}

function ActivityBody() {
  const [events, setEvents] = useState<OwnEvent[] | null>(null)
  const [days, setDays] = useState(30)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    api<{ days: number; events: OwnEvent[] }>('/audit/own-events')
      .then((answer) => {
        setDays(answer.days)
        setEvents(answer.events)
      })
      .catch((e: unknown) => setError((e as Error).message))
  }, [])
  return (
    <Stack gap="md">
      <Text size="sm" c="dimmed">
        What happened on your account in the last {days} days. If you do not recognise something, change your password and sign out your
        other devices.
      </Text>
      <FocusedAlert message={error} />
      {events?.length === 0 ? <Text data-testid="no-activity">Nothing in the last {days} days.</Text> : null}
      <Stack gap="xs" component="ol" data-testid="activity" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
        {(events ?? []).map((e) => (
          <Card key={e.id} withBorder padding="xs" component="li" data-testid={`activity-${e.type}`}>
            <Group gap="xs" wrap="wrap">
              <Text fw={600} size="sm">
                {labelOf(e)}
              </Text>
              {e.outcome === 'failure' ? (
                <Badge color="red" variant="light">
                  refused
                </Badge>
              ) : null}
              {e.byAnother ? (
                <Badge color="dark" variant="light">
                  by an administrator
                </Badge>
              ) : null}
            </Group>
            <Text size="xs" c="dimmed">
              {when(e.createdAt)}
              {e.method ? ` · ${e.method}` : ''}
              {e.userAgent ? ` · ${deviceOf(e.userAgent)}` : ''}
              {e.ipAddress ? ` · from ${e.ipAddress}` : ''}
            </Text>
          </Card>
        ))}
      </Stack>
    </Stack>
  )
}
