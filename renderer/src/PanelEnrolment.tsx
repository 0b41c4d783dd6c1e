import { Alert, Button, Code, Group, List, Stack, Text, TextInput } from '@mantine/core'
import { IconAlertTriangle } from '@tabler/icons-react'
import { type FormEvent, useEffect, useState } from 'react'
// The hosted Two-factor page's QR code (drawn here from the link alone, no third-party service) and key.
import { QrCode } from '../hosted/src/account/QrCode'
import { secretOf } from '../hosted/src/account/qr'
import { panelAuth } from './api'
import { dateTime } from './format'
import { addPanelPasskey, passkeysWorkHere, useSignInOptions } from './panel-passkey'

/**
 * The panel sign-in's enrolment step (issue 49 §10): an administrator of a role under
 * `twoFactor.enforcement` without a second factor passes through it before the panel opens. During
 * the grace it says how long is left and "Skip for now" opens the panel; once the grace is over the
 * panel stays shut until a factor is set up: an authenticator app (enabled with the password just
 * given, then confirmed with a code; its backup codes shown once), codes by email
 * (`twoFactor.otpOptions.enabled`), or a passkey where passkeys work. The same API endpoints the
 * hosted Two-factor page calls, through the panel's sign-in relay.
 */

export interface EnrolmentDue {
  deadline: string | null
  overdue: boolean
}

interface Offered {
  otp: boolean
  totpAvailable: boolean
}

const messageOf = (body: Record<string, unknown> | null, fallback: string): string =>
  typeof body?.message === 'string' ? body.message : fallback

/** Time left until `deadline`, to the hour ("3 days", "5 hours", "less than an hour"). */
function timeLeft(deadline: string): string {
  const hours = Math.round((new Date(deadline).getTime() - Date.now()) / 3_600_000)
  if (hours < 1) return 'less than an hour'
  const days = Math.floor(hours / 24)
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`
  return days ? unit(days, 'day') : unit(hours, 'hour')
}

export function PanelEnrolment({
  due,
  password,
  onDone,
  onError,
}: {
  due: EnrolmentDue
  password: string
  onDone: () => void
  onError: (message: string | null) => void
}) {
  const [offered, setOffered] = useState<Offered | null>(null)
  const [app, setApp] = useState<{ uri: string; codes: string[] } | null>(null)
  const [codes, setCodes] = useState<string[] | null>(null)
  const [code, setCode] = useState('')
  const [busy, setBusy] = useState(false)
  const passkey = useSignInOptions().data?.passkey === true && passkeysWorkHere()

  useEffect(() => {
    void panelAuth('two-factor/status').then((answer) => {
      if (answer.status === 200 && answer.body)
        setOffered({ otp: answer.body.otp === true, totpAvailable: answer.body.totpAvailable !== false })
      else onError(messageOf(answer.body, 'The second-factor settings could not be read'))
    })
  }, [onError])

  const run = async (action: () => Promise<void>) => {
    setBusy(true)
    onError(null)
    try {
      await action()
    } finally {
      setBusy(false)
    }
  }

  const setUpApp = () =>
    run(async () => {
      const answer = await panelAuth('two-factor/enable', { password })
      if (answer.status !== 200) return onError(messageOf(answer.body, `The app could not be set up (${answer.status})`))
      setApp({ uri: String(answer.body?.totpURI ?? ''), codes: (answer.body?.backupCodes as string[] | undefined) ?? [] })
    })

  const confirmApp = (event: FormEvent) => {
    event.preventDefault()
    void run(async () => {
      const answer = await panelAuth('two-factor/verify-totp', { code: code.trim() })
      if (answer.status !== 200) return onError(messageOf(answer.body, `The code was not accepted (${answer.status})`))
      setCodes(app?.codes ?? [])
      setApp(null)
    })
  }

  const byEmail = () =>
    run(async () => {
      const answer = await panelAuth('two-factor/enable', { password, method: 'otp' })
      if (answer.status !== 200) return onError(messageOf(answer.body, `Codes by email could not be turned on (${answer.status})`))
      onDone()
    })

  const addPasskey = () =>
    run(async () => {
      const failed = await addPanelPasskey()
      if (failed) return onError(failed)
      onDone()
    })

  if (codes) {
    return (
      <Stack gap="sm" data-testid="enrol-backup-codes">
        <Text size="sm">
          Two-factor authentication is on. Keep these backup codes somewhere safe: each works once, if you lose your authenticator app. They
          are shown only now.
        </Text>
        <List size="sm" spacing={2}>
          {codes.map((c) => (
            <List.Item key={c}>
              <Code>{c}</Code>
            </List.Item>
          ))}
        </List>
        <Button onClick={onDone} data-testid="enrol-continue">
          Continue to the panel
        </Button>
      </Stack>
    )
  }

  const what = [
    offered?.totpAvailable ? 'an authenticator app' : null,
    offered?.otp ? 'codes by email' : null,
    passkey ? 'a passkey' : null,
  ].filter(Boolean)
  return (
    <Stack gap="sm">
      <Alert color={due.overdue ? 'red' : 'yellow'} icon={<IconAlertTriangle />} data-testid="enrolment-required">
        {due.overdue
          ? `The time to set up a second factor ended${due.deadline ? ` on ${dateTime(due.deadline)}` : ''}. The panel opens once you set one up`
          : `Your account must have a second factor${due.deadline ? ` by ${dateTime(due.deadline)} (${timeLeft(due.deadline)} left)` : ''}. Set one up now`}
        {what.length ? `: ${what.join(', ').replace(/, ([^,]*)$/, ' or $1')}.` : '.'}
      </Alert>
      {app ? (
        <form onSubmit={confirmApp} aria-label="Confirm the authenticator app">
          <Stack gap="sm">
            <Text size="sm">
              Scan this code with your authenticator app (Aegis, Google Authenticator, 1Password…), or add the key below by hand, then enter
              the code it shows.
            </Text>
            <QrCode text={app.uri} />
            <Code block data-testid="enrol-totp-secret">
              {secretOf(app.uri)}
            </Code>
            <Text size="xs" style={{ wordBreak: 'break-all' }} data-testid="enrol-totp-uri">
              {app.uri}
            </Text>
            <TextInput
              label="Code from the app"
              autoComplete="one-time-code"
              inputMode="numeric"
              required
              value={code}
              onChange={(e) => setCode(e.currentTarget.value)}
              data-testid="enrol-code"
              data-autofocus
            />
            <Button type="submit" loading={busy} data-testid="enrol-turn-on">
              Turn on
            </Button>
          </Stack>
        </form>
      ) : (
        <Stack gap="xs">
          {offered?.totpAvailable ? (
            <Button onClick={() => void setUpApp()} loading={busy} data-testid="enrol-app">
              Set up an authenticator app
            </Button>
          ) : null}
          {offered?.otp ? (
            <Button variant="default" onClick={() => void byEmail()} disabled={busy} data-testid="enrol-email">
              Use codes by email
            </Button>
          ) : null}
          {passkey ? (
            <Button variant="default" onClick={() => void addPasskey()} disabled={busy} data-testid="enrol-passkey">
              Add a passkey
            </Button>
          ) : null}
        </Stack>
      )}
      {due.overdue ? null : (
        <Group>
          <Button variant="subtle" onClick={onDone} disabled={busy} data-testid="enrol-skip">
            Skip for now
          </Button>
        </Group>
      )}
    </Stack>
  )
}
