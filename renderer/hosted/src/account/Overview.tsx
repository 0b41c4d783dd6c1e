import { Alert, Anchor, Badge, Button, Group, List, Stack, Text, Title } from '@mantine/core'
import { useEffect, useState } from 'react'
import type { PublicConfig } from '../api'
import { api, pageURL } from '../api'
import type { PageProps } from '../page-props'
import { type AccountSession, AccountPage, FocusedAlert, when } from './common'

/** `GET /list-accounts`: the ways in linked to the person (credential = a password). */
export interface LinkedAccount {
  id: string
  providerId: string
  accountId: string
  createdAt: string
}

/** `GET /two-factor/status` (server/features/two-factor/service.ts ownTwoFactorStatus). */
export interface TwoFactorStatus {
  enabled: boolean
  totp: 'none' | 'pending' | 'verified'
  backupCodesLeft: number | null
  trustedDevices: number
  enrolmentRequired: boolean
  enrolmentDeadline: string | null
  /** The grace is over: no app lets the person in until they enrol. */
  enrolmentOverdue?: boolean
  otp: boolean
  totpAvailable: boolean
}

interface Protection {
  accounts: LinkedAccount[] | null
  twoFactor: TwoFactorStatus | null
  passkeys: number | null
  appPasswords: number | null
}

/** Each source answers on its own: a feature that is off (404) or fails leaves its line out. */
async function protectionOf(config: PublicConfig): Promise<Protection> {
  const quiet = <T,>(p: Promise<T>): Promise<T | null> => p.catch(() => null)
  const [accounts, twoFactor, passkeys, appPasswords] = await Promise.all([
    quiet(api<LinkedAccount[]>('/list-accounts')),
    config.twoFactor ? quiet(api<TwoFactorStatus>('/two-factor/status')) : Promise.resolve(null),
    config.passkey ? quiet(api<unknown[]>('/passkey/list-user-passkeys')) : Promise.resolve(null),
    quiet(api<{ appPasswords: Array<{ expired: boolean }> }>('/app-password/list')),
  ])
  return {
    accounts,
    twoFactor,
    passkeys: passkeys ? passkeys.length : null,
    appPasswords: appPasswords ? appPasswords.appPasswords.filter((p) => !p.expired).length : null,
  }
}

/** The account pages, in the order the overview lists them; each entry only when its feature is on. */
export function accountLinks(config: PublicConfig): Array<{ page: string; label: string; hint: string }> {
  return [
    { page: 'account/profile', label: 'Profile', hint: config.changeEmail ? 'Name, picture and email address' : 'Name and picture' },
    { page: 'account/password', label: 'Password', hint: 'Change your password' },
    ...(config.twoFactor
      ? [{ page: 'account/two-factor', label: 'Two-factor authentication', hint: 'Authenticator app and backup codes' }]
      : []),
    ...(config.passkey ? [{ page: 'account/passkeys', label: 'Passkeys', hint: 'Sign in with your device instead of a password' }] : []),
    ...(config.socialProviders.length > 0
      ? [{ page: 'account/linked', label: 'Linked accounts', hint: 'Sign in with another account you have' }]
      : []),
    { page: 'account/sessions', label: 'Sessions', hint: 'Where you are signed in' },
    { page: 'account/activity', label: 'Activity', hint: 'Sign-ins and changes of the last 30 days' },
    { page: 'account/apps', label: 'Connected apps', hint: 'Applications that can sign you in' },
    { page: 'account/app-passwords', label: 'App passwords', hint: 'Passwords for one device or app each' },
    ...(config.deleteUser ? [{ page: 'account/delete', label: 'Delete your account', hint: 'Remove it for good' }] : []),
  ]
}

function EmailLine({ current }: { current: AccountSession }) {
  const [sent, setSent] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const resend = async () => {
    setBusy(true)
    setError(null)
    try {
      await api('/send-verification-email', { email: current.user.email, callbackURL: pageURL('verify-email', { verified: '1' }) })
      setSent(true)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }
  return (
    <Stack gap={4}>
      <Group gap="xs" wrap="wrap">
        <Text data-testid="account-email" style={{ overflowWrap: 'anywhere' }}>
          {current.user.email}
        </Text>
        {current.user.emailVerified ? (
          <Badge color="teal" variant="light" data-testid="email-verified-badge">
            Verified
          </Badge>
        ) : (
          <Badge color="orange" variant="light" data-testid="email-unverified-badge">
            Not verified
          </Badge>
        )}
      </Group>
      {current.user.emailVerified ? null : sent ? (
        <Text size="sm" role="status" data-testid="verification-sent">
          We sent a verification link to {current.user.email}.
        </Text>
      ) : (
        <Button size="xs" variant="light" onClick={() => void resend()} loading={busy} style={{ alignSelf: 'flex-start' }}>
          Send a verification link
        </Button>
      )}
      <FocusedAlert message={error} />
    </Stack>
  )
}

function ProtectionList({ config, current, p }: { config: PublicConfig; current: AccountSession; p: Protection }) {
  const hasPassword = p.accounts?.some((a) => a.providerId === 'credential') ?? null
  const socials = (p.accounts ?? []).filter((a) => a.providerId !== 'credential')
  const providerName = (id: string) => config.socialProviders.find((s) => s.id === id)?.name ?? id
  const tf = p.twoFactor
  return (
    <List spacing={4} size="sm" data-testid="protection">
      {hasPassword !== null ? (
        <List.Item data-testid="protection-password">
          {hasPassword ? 'Password: set' : 'Password: none (you sign in another way)'}
        </List.Item>
      ) : null}
      {tf ? (
        <List.Item data-testid="protection-totp">
          {tf.totp === 'verified' ? 'Authenticator app: on' : tf.enabled ? 'Two-factor: on (codes by email)' : 'Authenticator app: off'}
        </List.Item>
      ) : null}
      {tf && tf.backupCodesLeft !== null ? (
        <List.Item data-testid="protection-backup-codes">Backup codes left: {tf.backupCodesLeft}</List.Item>
      ) : null}
      {p.passkeys !== null ? <List.Item data-testid="protection-passkeys">Passkeys: {p.passkeys}</List.Item> : null}
      {p.appPasswords !== null ? <List.Item data-testid="protection-app-passwords">App passwords: {p.appPasswords}</List.Item> : null}
      {socials.length > 0 ? (
        <List.Item data-testid="protection-linked">Linked: {socials.map((a) => providerName(a.providerId)).join(', ')}</List.Item>
      ) : null}
      <List.Item>Member since {when(current.user.createdAt)}</List.Item>
    </List>
  )
}

/**
 * The account center's front page (`/ui/account`): who the person is, whether their email is
 * verified (with a new link on demand), what protects the account, and a link to every page.
 */
export function AccountOverviewPage({ config }: PageProps) {
  return (
    <AccountPage config={config} title="Your account" overview>
      {(current) => <Overview config={config} current={current} />}
    </AccountPage>
  )
}

function Overview({ config, current }: { config: PublicConfig; current: AccountSession }) {
  const [p, setP] = useState<Protection | null>(null)
  useEffect(() => {
    void protectionOf(config).then(setP)
  }, [config])
  const tf = p?.twoFactor
  return (
    <Stack gap="md">
      <Stack gap={4}>
        <Text fw={600} size="lg" data-testid="account-name">
          {current.user.name}
        </Text>
        {current.user.username ? <Text size="sm">Username: {current.user.displayUsername ?? current.user.username}</Text> : null}
        <EmailLine current={current} />
      </Stack>
      {tf?.enrolmentRequired ? (
        <Alert color="yellow" variant="light" title="Set up a second factor" data-testid="enrolment-required">
          <Text size="sm" c="bright">
            Your account must have a second factor
            {tf.enrolmentDeadline ? ` by ${when(tf.enrolmentDeadline)}` : ''}.{' '}
            <Anchor href={pageURL('account/two-factor')}>Set up two-factor authentication</Anchor>.
          </Text>
        </Alert>
      ) : null}
      <Stack gap={4}>
        <Title order={2} size="h4">
          What protects your account
        </Title>
        {p ? <ProtectionList config={config} current={current} p={p} /> : <Text size="sm">Loading…</Text>}
      </Stack>
      <Stack gap={4}>
        <Title order={2} size="h4">
          Manage
        </Title>
        <nav aria-label="Account pages">
          <List spacing={6} size="sm" listStyleType="none" data-testid="account-links">
            {accountLinks(config).map((link) => (
              <List.Item key={link.page}>
                <Anchor href={pageURL(link.page)}>{link.label}</Anchor>
                <Text span size="sm">
                  {' '}
                  · {link.hint}
                </Text>
              </List.Item>
            ))}
            <List.Item>
              <Anchor href={pageURL('sign-out')}>Sign out</Anchor>
            </List.Item>
          </List>
        </nav>
      </Stack>
      <Text size="xs" c="dimmed">
        This is the one account you use in every app that signs you in through {config.appName}.
      </Text>
    </Stack>
  )
}
