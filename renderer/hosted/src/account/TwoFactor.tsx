import { Alert, Badge, Button, Card, Code, Group, List, PasswordInput, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core'
import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react'
import { api } from '../api'
import { capitalised, enrolmentChoice, enrolmentReturnTo, timeLeft } from '../enrolment'
import { errorsOf, type FormErrors, invalid, NO_ERRORS } from '../errors'
import type { PageProps } from '../page-props'
import { type AccountSession, AccountPage, FocusedAlert, useFocusFirstInvalid, when } from './common'
import type { TwoFactorStatus } from './Overview'
import { QrCode } from './QrCode'
import { secretOf } from './qr'
import { deviceOf } from './user-agent'

/** Backup codes, shown once: a list, a download (a text file made here) and print. */
function BackupCodes({ codes, appName, onDone }: { codes: string[]; appName: string; onDone: () => void }) {
  const download = () => {
    const text = `${appName} backup codes\nEach code works once, in place of a code from your authenticator app.\n\n${codes.join('\n')}\n`
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }))
    const a = document.createElement('a')
    a.href = url
    a.download = `${appName.replace(/[^A-Za-z0-9._-]+/g, '-')}-backup-codes.txt`
    document.body.append(a)
    a.click()
    a.remove()
    setTimeout(() => URL.revokeObjectURL(url), 60_000)
  }
  return (
    <Alert
      color="teal"
      variant="light"
      title={
        <Text fw={700} size="sm" c="bright">
          Your backup codes
        </Text>
      }
      data-testid="backup-codes"
    >
      <Stack gap="xs">
        <Text size="sm" c="bright">
          Keep them somewhere safe: each works once, if you lose your authenticator app. They are shown only now.
        </Text>
        <SimpleGrid cols={2} spacing={4} component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {codes.map((code) => (
            <li key={code}>
              <Code fz="sm" c="bright">
                {code}
              </Code>
            </li>
          ))}
        </SimpleGrid>
        <Group gap="xs">
          <Button size="xs" variant="filled" onClick={download}>
            Download
          </Button>
          <Button size="xs" variant="filled" onClick={() => window.print()}>
            Print
          </Button>
          <Button size="xs" variant="default" onClick={onDone}>
            Done
          </Button>
        </Group>
      </Stack>
    </Alert>
  )
}

/** A password field and a button: the guard of each change to the second factor. */
function PasswordForm({
  label,
  button,
  danger = false,
  onSubmit,
}: {
  label: string
  button: string
  danger?: boolean
  onSubmit: (password: string) => Promise<void>
}) {
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS)
  const [busy, setBusy] = useState(false)
  const form = useRef<HTMLFormElement>(null)
  const focusInvalid = useFocusFirstInvalid(form)
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const password = String(new FormData(event.currentTarget).get('password') ?? '')
    if (!password) {
      setErrors({ fields: { password: 'Enter your password' }, form: null })
      focusInvalid()
      return
    }
    setBusy(true)
    setErrors(NO_ERRORS)
    try {
      await onSubmit(password)
      form.current?.reset()
    } catch (e) {
      setErrors(errorsOf(e))
      focusInvalid()
    } finally {
      setBusy(false)
    }
  }
  return (
    <form ref={form} onSubmit={(e) => void submit(e)} noValidate aria-label={label}>
      <Stack gap="xs">
        <FocusedAlert message={errors.form} />
        <PasswordInput
          name="password"
          label="Your password"
          autoComplete="current-password"
          required
          error={errors.fields.password}
          aria-invalid={invalid(errors, 'password')}
        />
        <Button type="submit" loading={busy} color={danger ? 'red.9' : undefined} style={{ alignSelf: 'flex-start' }}>
          {button}
        </Button>
      </Stack>
    </form>
  )
}

/** Scan, then confirm with a first code (POST /two-factor/verify-totp turns two-factor on). */
function ConfirmEnrolment({ uri, onConfirmed }: { uri: string; onConfirmed: () => void }) {
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS)
  const [busy, setBusy] = useState(false)
  const form = useRef<HTMLFormElement>(null)
  const focusInvalid = useFocusFirstInvalid(form)
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const code = String(new FormData(event.currentTarget).get('code') ?? '').replace(/\s+/g, '')
    if (!code) {
      setErrors({ fields: { code: 'Enter the code your app shows' }, form: null })
      focusInvalid()
      return
    }
    setBusy(true)
    setErrors(NO_ERRORS)
    try {
      await api('/two-factor/verify-totp', { code })
      onConfirmed()
    } catch (e) {
      setErrors(errorsOf(e))
      focusInvalid()
    } finally {
      setBusy(false)
    }
  }
  return (
    <Stack gap="sm" data-testid="totp-enrolment">
      <Text size="sm">Scan this code with your authenticator app (Aegis, Google Authenticator, 1Password…).</Text>
      <QrCode text={uri} />
      <Text size="sm">Or enter this key in the app:</Text>
      <Code fz="sm" data-testid="totp-secret" style={{ overflowWrap: 'anywhere' }}>
        {secretOf(uri)}
      </Code>
      <Text size="sm">The full link:</Text>
      <Code block fz="xs" data-testid="totp-uri" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
        {uri}
      </Code>
      <form ref={form} onSubmit={(e) => void submit(e)} noValidate aria-label="Confirm the authenticator app">
        <Stack gap="xs">
          <FocusedAlert message={errors.form} />
          <TextInput
            name="code"
            label="Code from the app"
            inputMode="numeric"
            autoComplete="one-time-code"
            required
            error={errors.fields.code}
          />
          <Button type="submit" loading={busy} style={{ alignSelf: 'flex-start' }}>
            Turn on
          </Button>
        </Stack>
      </form>
    </Stack>
  )
}

/** `GET /two-factor/trusted-devices` (server/features/two-factor/service.ts ownTrustedDevices). */
interface TrustedDevice {
  id: string
  userAgent: string | null
  trustedAt: string
  lastUsedAt: string
  expiresAt: string
  current: boolean
}

/**
 * The browsers that skip the code (ticked "Trust this browser" at a sign-in): each with its device
 * (from its user agent), since when and until when; forget one (POST
 * /two-factor/forget-trusted-device) or all (POST /two-factor/forget-trusted-devices). A forgotten
 * browser is asked for a code at its next sign-in.
 */
function TrustedBrowsers({ onChange }: { onChange: () => void }) {
  const [rows, setRows] = useState<TrustedDevice[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const load = useCallback(() => {
    return (
      api<{ devices: TrustedDevice[] }>('/two-factor/trusted-devices')
        // This browser first, then the most recently used (the server's order).
        .then((answer) => setRows([...answer.devices].sort((a, b) => Number(b.current) - Number(a.current))))
        .catch((e: unknown) => setError((e as Error).message))
    )
  }, [])
  useEffect(() => void load(), [load])

  const forget = async (key: string, run: () => Promise<unknown>, done: string) => {
    setBusy(key)
    setError(null)
    setNotice(null)
    try {
      await run()
      await load()
      setNotice(done)
      onChange()
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(null)
    }
  }

  return (
    <Stack gap="xs" data-testid="trusted-browsers">
      <Title order={2} size="h4">
        Trusted browsers
      </Title>
      <Text size="sm">
        A browser you trusted when signing in (“Trust this browser”) is not asked for a code for a while. Forget one you no longer use or do
        not recognise: it will be asked for a code at its next sign-in.
      </Text>
      {notice ? (
        <Text role="status" size="sm" data-testid="trusted-notice">
          {notice}
        </Text>
      ) : null}
      <FocusedAlert message={error} />
      {rows && rows.length === 0 ? (
        <Text size="sm" data-testid="no-trusted-browsers">
          No trusted browsers.
        </Text>
      ) : null}
      {(rows ?? []).map((row) => {
        const device = deviceOf(row.userAgent)
        return (
          <Card key={row.id} withBorder padding="sm" data-testid="trusted-browser">
            <Group justify="space-between" align="flex-start" wrap="nowrap">
              <Stack gap={2} style={{ minWidth: 0 }}>
                <Group gap="xs">
                  <Text fw={600} data-testid="trusted-device">
                    {device}
                  </Text>
                  {row.current ? (
                    <Badge color="teal" variant="light">
                      This browser
                    </Badge>
                  ) : null}
                </Group>
                <Text size="xs" c="dimmed" data-testid="trusted-when">
                  Trusted {when(row.trustedAt)} · no code asked until {when(row.expiresAt)}
                </Text>
              </Stack>
              <Button
                color="red"
                variant="outline"
                size="xs"
                loading={busy === row.id}
                onClick={() =>
                  void forget(row.id, () => api('/two-factor/forget-trusted-device', { id: row.id }), `${device} was forgotten.`)
                }
                aria-label={`Forget ${device}, trusted ${when(row.trustedAt)}`}
              >
                Forget
              </Button>
            </Group>
          </Card>
        )
      })}
      {rows && rows.length > 1 ? (
        <Button
          color="red"
          variant="outline"
          loading={busy === 'all'}
          style={{ alignSelf: 'flex-start' }}
          onClick={() => void forget('all', () => api('/two-factor/forget-trusted-devices', {}), 'Every trusted browser was forgotten.')}
        >
          Forget every trusted browser
        </Button>
      ) : null}
    </Stack>
  )
}

/**
 * "Two-factor authentication" (`/ui/account/two-factor`): the authenticator app (TOTP) set up with
 * a QR code drawn here and confirmed by a first code, or, where the server mails one-time codes
 * (`twoFactor.otpOptions.enabled`), two-factor with codes sent to the person's email address and no
 * app; backup codes shown once (download, print), regenerated; the trusted browsers listed and
 * forgotten; two-factor turned off. Each change of factor is guarded by the password. The same
 * endpoints apps call (`/two-factor/enable` with `method: 'totp' | 'otp'`, `verify-totp`,
 * `generate-backup-codes`, `disable`), plus Gatehouse's reads and forgets (`GET /two-factor/status`,
 * `GET /two-factor/trusted-devices`, `POST /two-factor/forget-trusted-device(s)`). Opened as the
 * enrolment step of a sign-in (`?enrol=1&returnTo=`, issue 49 §10): during the grace it says how
 * long is left and offers "Skip for now"; once the grace is over, no skip; once enrolled,
 * "Continue" goes on to returnTo.
 */
export function AccountTwoFactorPage({ config }: PageProps) {
  return (
    <AccountPage config={config} title="Two-factor authentication">
      {(current) => <TwoFactorBody appName={config.appName} passkey={config.passkey} current={current} />}
    </AccountPage>
  )
}

function TwoFactorBody({ appName, passkey, current }: { appName: string; passkey: boolean; current: AccountSession }) {
  const [status, setStatus] = useState<TwoFactorStatus | null>(null)
  // The enrolment step after a sign-in (`?enrol=1&returnTo=`): where "Skip for now" and "Continue" go.
  const [returnTo, setReturnTo] = useState<string | null>(null)
  useEffect(() => {
    if (new URLSearchParams(location.search).get('enrol') === '1') void enrolmentReturnTo().then(setReturnTo)
  }, [])
  const [error, setError] = useState<string | null>(null)
  const [enrolling, setEnrolling] = useState<{ uri: string; codes: string[] } | null>(null)
  const [codes, setCodes] = useState<string[] | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  // Returns when the page shows the new state: a notice is set only then, so it never speaks of
  // a change the page does not show yet (the account pages all follow this).
  const load = useCallback(() => {
    return api<TwoFactorStatus>('/two-factor/status')
      .then(setStatus)
      .catch((e: unknown) => setError((e as Error).message))
  }, [])
  useEffect(() => void load(), [load])

  if (error) return <FocusedAlert message={error} />
  if (!status) return null

  const app = status.totp === 'verified'
  const enabled = status.enabled || app
  // Mailed codes are offered at sign-in to everyone with two-factor on while the server sends them.
  const byEmail = status.otp && enabled
  const overdue = status.enrolmentOverdue === true
  const email = current.user.email
  // What counts here (issue 49 §10): the app, codes by email, a passkey, as this server offers them.
  const choice = enrolmentChoice(status, passkey)
  return (
    <Stack gap="md">
      {notice ? (
        <Text role="status" data-testid="two-factor-notice">
          {notice}
        </Text>
      ) : null}
      {status.enrolmentRequired ? (
        <Alert
          color={overdue ? 'red' : 'yellow'}
          variant="light"
          title={
            <Text fw={700} size="sm" c="bright">
              {overdue ? 'Set up a second factor to continue' : 'A second factor is required'}
            </Text>
          }
          data-testid="enrolment-required"
        >
          <Text size="sm" c="bright">
            {overdue
              ? `The time to set up a second factor ended${status.enrolmentDeadline ? ` on ${when(status.enrolmentDeadline)}` : ''}. Applications will not let you in until you ${choice}.`
              : status.enrolmentDeadline
                ? `Your account must have a second factor by ${when(status.enrolmentDeadline)} (${timeLeft(status.enrolmentDeadline)} left). ${capitalised(choice)}.`
                : `Your account must have a second factor. ${capitalised(choice)}.`}
          </Text>
        </Alert>
      ) : null}
      {returnTo && status.enrolmentRequired && !overdue ? (
        <Button variant="default" style={{ alignSelf: 'flex-start' }} onClick={() => location.assign(returnTo)} data-testid="enrol-skip">
          Skip for now
        </Button>
      ) : null}
      {codes ? <BackupCodes codes={codes} appName={appName} onDone={() => setCodes(null)} /> : null}
      {returnTo && enabled && !status.enrolmentRequired ? (
        <Button style={{ alignSelf: 'flex-start' }} onClick={() => location.assign(returnTo)} data-testid="enrol-continue">
          Continue
        </Button>
      ) : null}
      <Text data-testid="two-factor-state">
        {enabled
          ? 'Two-factor authentication is on: signing in asks for a code after your password.'
          : 'Two-factor authentication is off: signing in asks for your password only.'}
      </Text>
      <Stack gap={4}>
        <Title order={2} size="h4">
          Authenticator app
        </Title>
        <Text data-testid="totp-state">{app ? 'On: signing in asks for a code from your app.' : 'Off.'}</Text>
        {app && status.backupCodesLeft !== null ? (
          <Text size="sm" data-testid="backup-codes-left">
            Backup codes left: {status.backupCodesLeft}
          </Text>
        ) : null}
      </Stack>
      {!app && status.totpAvailable && !enrolling ? (
        <Stack gap="xs">
          <Text size="sm">Set up an app that shows a new code every 30 seconds; signing in will ask for it after your password.</Text>
          <PasswordForm
            label="Set up an authenticator app"
            button="Set up"
            onSubmit={async (password) => {
              const answer = await api<{ totpURI: string; backupCodes: string[] }>('/two-factor/enable', { password })
              setNotice(null)
              setEnrolling({ uri: answer.totpURI, codes: answer.backupCodes })
            }}
          />
        </Stack>
      ) : null}
      {enrolling ? (
        <ConfirmEnrolment
          uri={enrolling.uri}
          onConfirmed={() =>
            void load().then(() => {
              setCodes(enrolling.codes)
              setEnrolling(null)
              setNotice('Two-factor authentication is on.')
            })
          }
        />
      ) : null}
      {status.otp ? (
        <Stack gap="xs">
          <Title order={2} size="h4">
            Codes by email
          </Title>
          <Text data-testid="otp-state">{byEmail ? `On: signing in can send a one-time code to ${email}.` : 'Off.'}</Text>
          {enabled ? null : (
            <>
              <Text size="sm">
                No authenticator app? Signing in will then ask, after your password, for a one-time code we send to {email}.
              </Text>
              <PasswordForm
                label="Turn on codes by email"
                button="Turn on codes by email"
                onSubmit={async (password) => {
                  await api('/two-factor/enable', { password, method: 'otp' })
                  await load()
                  setEnrolling(null)
                  setNotice(`Two-factor authentication is on: signing in will ask for a code sent to ${email}.`)
                }}
              />
            </>
          )}
        </Stack>
      ) : null}
      {app ? (
        <Stack gap="xs">
          <Title order={2} size="h4">
            Backup codes
          </Title>
          <Text size="sm">New codes replace the old ones, which stop working.</Text>
          <PasswordForm
            label="Make new backup codes"
            button="Make new backup codes"
            onSubmit={async (password) => {
              const answer = await api<{ backupCodes: string[] }>('/two-factor/generate-backup-codes', { password })
              await load()
              setCodes(answer.backupCodes)
              setNotice('New backup codes were made; the old ones no longer work.')
            }}
          />
        </Stack>
      ) : null}
      {enabled || status.trustedDevices > 0 ? <TrustedBrowsers onChange={load} /> : null}
      {enabled ? (
        <Stack gap="xs">
          <Title order={2} size="h4">
            Turn off
          </Title>
          <List size="sm">
            <List.Item>Signing in will ask for your password only.</List.Item>
            {app ? <List.Item>Your authenticator app's entry and your backup codes stop working.</List.Item> : null}
            {byEmail ? <List.Item>No more codes are sent to your email address.</List.Item> : null}
            <List.Item>Your trusted browsers are forgotten.</List.Item>
          </List>
          <PasswordForm
            label="Turn off two-factor authentication"
            button="Turn off two-factor"
            danger
            onSubmit={async (password) => {
              await api('/two-factor/disable', { password })
              await load()
              setCodes(null)
              setNotice('Two-factor authentication is off.')
            }}
          />
        </Stack>
      ) : null}
    </Stack>
  )
}
