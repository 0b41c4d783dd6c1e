import { Alert, Box, Button, Code, Group, List, PasswordInput, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core'
import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react'
import { api } from '../api'
import { enrolmentReturnTo, timeLeft } from '../enrolment'
import { errorsOf, type FormErrors, invalid, NO_ERRORS } from '../errors'
import type { PageProps } from '../page-props'
import { AccountPage, FocusedAlert, useFocusFirstInvalid, when } from './common'
import type { TwoFactorStatus } from './Overview'
import { qrPath } from './qr'

/** The otpauth:// link drawn as a QR code, here in the page. */
export function QrCode({ text }: { text: string }) {
  const { d, size } = qrPath(text)
  return (
    <Box bg="white" p={8} style={{ width: 'fit-content', lineHeight: 0 }}>
      <svg
        role="img"
        aria-label="QR code of the authenticator app link (the link is also written below)"
        viewBox={`-2 -2 ${size + 4} ${size + 4}`}
        width={200}
        height={200}
        shapeRendering="crispEdges"
        data-testid="totp-qr"
      >
        <rect x={-2} y={-2} width={size + 4} height={size + 4} fill="#ffffff" />
        <path d={d} fill="#000000" data-testid="totp-qr-path" />
      </svg>
    </Box>
  )
}

/** The secret of an otpauth:// link, for typing into an app that cannot scan. */
const secretOf = (uri: string): string => {
  try {
    return new URL(uri).searchParams.get('secret') ?? ''
  } catch {
    return ''
  }
}

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
        <Text fw={700} size="sm" c="dark.9">
          Your backup codes
        </Text>
      }
      data-testid="backup-codes"
    >
      <Stack gap="xs">
        <Text size="sm" c="dark.9">
          Keep them somewhere safe: each works once, if you lose your authenticator app. They are shown only now.
        </Text>
        <SimpleGrid cols={2} spacing={4} component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {codes.map((code) => (
            <li key={code}>
              <Code fz="sm" c="dark.9">
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

/**
 * "Two-factor authentication" (`/ui/account/two-factor`): the authenticator app (TOTP) set up with
 * a QR code drawn here and confirmed by a first code, backup codes shown once (download, print),
 * regenerated, and two-factor turned off, each guarded by the password. The same endpoints apps
 * call (`/two-factor/enable`, `verify-totp`, `generate-backup-codes`, `disable`), plus the page's
 * read of `GET /two-factor/status`. Opened as the enrolment step of a sign-in (`?enrol=1&returnTo=`,
 * issue 49 §10): during the grace it says how long is left and offers "Skip for now"; once the
 * grace is over, no skip; once enrolled (backup codes shown), "Continue" goes on to returnTo.
 */
export function AccountTwoFactorPage({ config }: PageProps) {
  return (
    <AccountPage config={config} title="Two-factor authentication">
      {() => <TwoFactorBody appName={config.appName} />}
    </AccountPage>
  )
}

function TwoFactorBody({ appName }: { appName: string }) {
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
  const load = useCallback(() => {
    api<TwoFactorStatus>('/two-factor/status')
      .then(setStatus)
      .catch((e: unknown) => setError((e as Error).message))
  }, [])
  useEffect(load, [load])

  if (error) return <FocusedAlert message={error} />
  if (!status) return null

  const on = status.totp === 'verified'
  const overdue = status.enrolmentOverdue === true
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
            <Text fw={700} size="sm" c="dark.9">
              {overdue ? 'Set up a second factor to continue' : 'A second factor is required'}
            </Text>
          }
          data-testid="enrolment-required"
        >
          <Text size="sm" c="dark.9">
            {overdue
              ? `The time to set up a second factor ended${status.enrolmentDeadline ? ` on ${when(status.enrolmentDeadline)}` : ''}. Applications will not let you in until you set up an authenticator app below.`
              : status.enrolmentDeadline
                ? `Your account must have a second factor by ${when(status.enrolmentDeadline)} (${timeLeft(status.enrolmentDeadline)} left). Set up an authenticator app below.`
                : 'Your account must have a second factor. Set up an authenticator app below.'}
          </Text>
        </Alert>
      ) : null}
      {returnTo && status.enrolmentRequired && !overdue ? (
        <Button variant="default" style={{ alignSelf: 'flex-start' }} onClick={() => location.assign(returnTo)} data-testid="enrol-skip">
          Skip for now
        </Button>
      ) : null}
      {codes ? <BackupCodes codes={codes} appName={appName} onDone={() => setCodes(null)} /> : null}
      {returnTo && on && !status.enrolmentRequired ? (
        <Button style={{ alignSelf: 'flex-start' }} onClick={() => location.assign(returnTo)} data-testid="enrol-continue">
          Continue
        </Button>
      ) : null}
      <Stack gap={4}>
        <Title order={2} size="h4">
          Authenticator app
        </Title>
        <Text data-testid="totp-state">{on ? 'On: signing in asks for a code from your app.' : 'Off.'}</Text>
        {on && status.backupCodesLeft !== null ? (
          <Text size="sm" data-testid="backup-codes-left">
            Backup codes left: {status.backupCodesLeft}
          </Text>
        ) : null}
        {on && status.trustedDevices > 0 ? (
          <Text size="sm">Trusted browsers (no code asked for a while): {status.trustedDevices}. Turning two-factor off forgets them.</Text>
        ) : null}
      </Stack>
      {!on && status.totpAvailable && !enrolling ? (
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
          onConfirmed={() => {
            setCodes(enrolling.codes)
            setEnrolling(null)
            setNotice('Two-factor authentication is on.')
            load()
          }}
        />
      ) : null}
      {on ? (
        <>
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
                setCodes(answer.backupCodes)
                setNotice('New backup codes were made; the old ones no longer work.')
                load()
              }}
            />
          </Stack>
          <Stack gap="xs">
            <Title order={2} size="h4">
              Turn off
            </Title>
            <List size="sm">
              <List.Item>Signing in will ask for your password only.</List.Item>
              <List.Item>Your authenticator app's entry and your backup codes stop working.</List.Item>
            </List>
            <PasswordForm
              label="Turn off two-factor authentication"
              button="Turn off two-factor"
              danger
              onSubmit={async (password) => {
                await api('/two-factor/disable', { password })
                setCodes(null)
                setNotice('Two-factor authentication is off.')
                load()
              }}
            />
          </Stack>
        </>
      ) : null}
    </Stack>
  )
}
