import { notifications } from '@mantine/notifications'
import { Alert, Anchor, Button, Center, Code, Group, Paper, PasswordInput, Stack, Text, TextInput, Title, Tooltip } from '@mantine/core'
import { useQueryClient } from '@tanstack/react-query'
import { IconAlertTriangle, IconKey, IconShieldLock } from '@tabler/icons-react'
import { Component, type FormEvent, type ReactNode, useEffect, useState } from 'react'
import { PanelCallError, panelAuth, SIGNED_OUT_EVENT, transport, useOp } from './api'
import { Loading } from './components/common'
import { addPanelPasskey, panelPasskeyName, passkeysWorkHere, signInWithPasskey, useSignInOptions } from './panel-passkey'
import { type EnrolmentDue, PanelEnrolment } from './PanelEnrolment'

/**
 * The browser panel's door (issue 31 §1): an administrator signs in with their Gatehouse account
 * through the API's own sign-in endpoints (relayed by the panel listener under /panel/auth/),
 * second factor included. The desktop app has no door: it acts as its OS account.
 */

type Step =
  | { kind: 'password' }
  | { kind: 'code'; methods: string[]; using: 'totp' | 'otp' | 'backup' }
  // twoFactor.enforcement names the administrator's role and they have no second factor yet (issue 49 §10).
  | { kind: 'enrol'; due: EnrolmentDue }

/** The sign-in answer's enrolment notice (two-factor's `twoFactorEnrollment`), when one is due. */
function enrolmentDue(body: Record<string, unknown> | null): EnrolmentDue | null {
  const notice = body?.twoFactorEnrollment as { required?: boolean; deadline?: string; overdue?: boolean } | undefined
  if (!notice?.required) return null
  return { deadline: typeof notice.deadline === 'string' ? notice.deadline : null, overdue: notice.overdue === true }
}

const messageOf = (body: Record<string, unknown> | null, fallback: string): string =>
  typeof body?.message === 'string' ? body.message : fallback

export function PanelSignIn({ notice, onSignedIn }: { notice: string | null; onSignedIn: () => void }) {
  const [step, setStep] = useState<Step>({ kind: 'password' })
  const [identifier, setIdentifier] = useState('')
  const [password, setPassword] = useState('')
  const [code, setCode] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [info, setInfo] = useState<string | null>(null)

  useEffect(() => {
    document.title = 'Sign in · Gatehouse'
  }, [])

  const signInOptions = useSignInOptions().data
  const passkey = async () => {
    setBusy(true)
    setError(null)
    try {
      const failed = await signInWithPasskey()
      if (failed) return setError(failed)
      onSignedIn()
    } finally {
      setBusy(false)
    }
  }

  const submitPassword = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const byUsername = !identifier.includes('@')
      const answer = await panelAuth(
        byUsername ? 'sign-in/username' : 'sign-in/email',
        byUsername ? { username: identifier, password, rememberMe: true } : { email: identifier, password, rememberMe: true },
      )
      if (answer.status !== 200) return setError(messageOf(answer.body, `Sign-in failed (${answer.status})`))
      if (answer.body?.twoFactorRedirect) {
        const methods = Array.isArray(answer.body.twoFactorMethods) ? (answer.body.twoFactorMethods as string[]) : ['totp']
        setStep({ kind: 'code', methods, using: methods.includes('totp') ? 'totp' : 'otp' })
        if (!methods.includes('totp') && methods.includes('otp')) await sendCode()
        return
      }
      const due = enrolmentDue(answer.body)
      if (due) return setStep({ kind: 'enrol', due })
      onSignedIn()
    } finally {
      setBusy(false)
    }
  }

  const sendCode = async () => {
    const sent = await panelAuth('two-factor/send-otp', {})
    if (sent.status === 200) setInfo('A code was sent to your email address.')
    else setError(messageOf(sent.body, 'The code could not be sent'))
  }

  const submitCode = async (event: FormEvent) => {
    event.preventDefault()
    if (step.kind !== 'code') return
    setBusy(true)
    setError(null)
    try {
      const path = { totp: 'two-factor/verify-totp', otp: 'two-factor/verify-otp', backup: 'two-factor/verify-backup-code' }[step.using]
      const answer = await panelAuth(path, { code: code.trim() })
      if (answer.status !== 200) return setError(messageOf(answer.body, `Verification failed (${answer.status})`))
      onSignedIn()
    } finally {
      setBusy(false)
    }
  }

  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder shadow="sm" p="xl" radius="md" w={400} maw="100%">
        <Stack gap="md">
          <Stack gap={4} align="center">
            <IconShieldLock size={32} aria-hidden />
            <Title order={1} size="h3">
              Sign in to Gatehouse
            </Title>
            <Text size="sm" ta="center">
              {step.kind === 'password'
                ? 'Use your administrator account.'
                : step.kind === 'enrol'
                  ? 'Set up a second factor for your account.'
                  : 'Enter the code of your second factor.'}
            </Text>
          </Stack>
          {notice && (
            <Alert color="yellow" icon={<IconAlertTriangle />} data-testid="sign-in-notice">
              {notice}
            </Alert>
          )}
          {error && (
            <Alert color="red" icon={<IconAlertTriangle />} data-testid="sign-in-error" role="alert">
              {error}
            </Alert>
          )}
          {info && (
            <Text size="sm" data-testid="sign-in-info">
              {info}
            </Text>
          )}
          {step.kind === 'enrol' ? (
            <PanelEnrolment due={step.due} password={password} onDone={onSignedIn} onError={setError} />
          ) : step.kind === 'password' ? (
            <form onSubmit={submitPassword}>
              <Stack gap="sm">
                <TextInput
                  label="Email or username"
                  autoComplete="username"
                  required
                  value={identifier}
                  onChange={(e) => setIdentifier(e.currentTarget.value)}
                  data-testid="sign-in-identifier"
                  data-autofocus
                />
                <PasswordInput
                  label="Password"
                  autoComplete="current-password"
                  required
                  value={password}
                  onChange={(e) => setPassword(e.currentTarget.value)}
                  data-testid="sign-in-password"
                />
                <Button type="submit" loading={busy} data-testid="sign-in-submit">
                  Sign in
                </Button>
                {signInOptions?.passkey &&
                  (passkeysWorkHere() ? (
                    <Button
                      variant="default"
                      leftSection={<IconKey size={16} />}
                      onClick={() => void passkey()}
                      disabled={busy}
                      data-testid="sign-in-passkey"
                    >
                      Sign in with a passkey
                    </Button>
                  ) : (
                    <Text size="sm" data-testid="passkey-elsewhere">
                      Passkeys work at the panel's name, not its address:{' '}
                      <Anchor href={signInOptions.passkeyOrigin} data-testid="passkey-localhost-link">
                        open {signInOptions.passkeyOrigin}
                      </Anchor>{' '}
                      to sign in with one.
                    </Text>
                  ))}
              </Stack>
            </form>
          ) : (
            <form onSubmit={submitCode}>
              <Stack gap="sm">
                <TextInput
                  label={
                    step.using === 'backup'
                      ? 'Backup code'
                      : step.using === 'otp'
                        ? 'Code from the email'
                        : 'Code from your authenticator app'
                  }
                  autoComplete="one-time-code"
                  required
                  value={code}
                  onChange={(e) => setCode(e.currentTarget.value)}
                  data-testid="sign-in-code"
                />
                <Button type="submit" loading={busy} data-testid="sign-in-verify">
                  Verify
                </Button>
                {step.using !== 'backup' && (
                  <Anchor component="button" type="button" size="sm" onClick={() => setStep({ ...step, using: 'backup' })}>
                    Use a backup code
                  </Anchor>
                )}
                {step.methods.includes('otp') && step.using !== 'otp' && (
                  <Anchor
                    component="button"
                    type="button"
                    size="sm"
                    onClick={() => {
                      setStep({ ...step, using: 'otp' })
                      void sendCode()
                    }}
                  >
                    Email me a code instead
                  </Anchor>
                )}
              </Stack>
            </form>
          )}
          <Text size="xs">
            No administrator yet, or none can sign in? Open the recovery link Gatehouse prints when it starts (
            <Code>http://127.0.0.1:PORT/?token=…</Code>), then create or promote an administrator under Users.
          </Text>
        </Stack>
      </Paper>
    </Center>
  )
}

const SIGNED_OUT_NOTICE: Record<string, string> = {
  PANEL_SIGN_IN_REQUIRED: 'Your panel session ended. Sign in again.',
  PANEL_NOT_ADMIN: 'This account is not an administrator. Sign in with an administrator account.',
  // twoFactor.enforcement: the grace to enrol is over (the panel, like every face, waits for it).
  TWO_FACTOR_ENROLLMENT_REQUIRED: 'This account must have a second factor first. Sign in again to set one up.',
}

/** Refusals after which the panel keeps no session (the account may not use the panel as it is). */
const ENDS_SESSION = new Set(['PANEL_NOT_ADMIN', 'TWO_FACTOR_ENROLLMENT_REQUIRED'])

/**
 * Shows the panel once a caller is known, else the sign-in page: at start, and whenever an
 * operation answers that the session ended (expired, revoked, the recovery link of a previous run).
 */
export function PanelGate({ children }: { children: ReactNode }) {
  const client = useQueryClient()
  const info = useOp('server.info', {}, { retry: false })
  const [signedOut, setSignedOut] = useState<string | null>(null)
  useEffect(() => {
    const onSignedOut = (event: Event) => {
      const code = ((event as CustomEvent).detail as { code?: string } | undefined)?.code ?? 'PANEL_SIGN_IN_REQUIRED'
      // An account that is no administrator (or must enrol a second factor first) keeps no panel session.
      if (ENDS_SESSION.has(code)) void panelAuth('sign-out', {})
      setSignedOut(code)
    }
    window.addEventListener(SIGNED_OUT_EVENT, onSignedOut)
    return () => window.removeEventListener(SIGNED_OUT_EVENT, onSignedOut)
  }, [])
  if (transport() === 'ipc') return children
  if (info.isPending) return <Loading label="Opening the panel" />
  const refused = info.error instanceof PanelCallError && SIGNED_OUT_NOTICE[info.error.code] ? info.error.code : null
  const reason = signedOut ?? refused
  if (reason) {
    return (
      <PanelSignIn
        notice={signedOut || ENDS_SESSION.has(reason) ? (SIGNED_OUT_NOTICE[reason] ?? null) : null}
        onSignedIn={() => {
          setSignedOut(null)
          void client.resetQueries()
        }}
      />
    )
  }
  return children
}

/** Signs the browser panel out (its Gatehouse session and the recovery cookie), then shows the sign-in page. */
export async function signOutOfPanel(): Promise<void> {
  await panelAuth('sign-out', {})
  window.dispatchEvent(new CustomEvent(SIGNED_OUT_EVENT, { detail: { code: 'SIGNED_OUT' } }))
}

/**
 * A view whose code could not be loaded (the server restarted with a new build, or the network
 * dropped): a message and a reload, never a blank page.
 */
export class ViewLoadBoundary extends Component<{ children: ReactNode; view: string }, { failed: boolean }> {
  override state = { failed: false }
  static getDerivedStateFromError() {
    return { failed: true }
  }
  override componentDidUpdate(previous: { view: string }) {
    if (previous.view !== this.props.view && this.state.failed) this.setState({ failed: false })
  }
  override render() {
    if (!this.state.failed) return this.props.children
    return (
      <Alert color="yellow" icon={<IconAlertTriangle />} title="This view could not be loaded" data-testid="view-load-failed">
        <Stack gap="xs">
          <Text size="sm">The server may have restarted or been updated. Reload the panel to continue.</Text>
          <div>
            <Button size="xs" variant="light" onClick={() => window.location.reload()}>
              Reload
            </Button>
          </div>
        </Stack>
      </Alert>
    )
  }
}

/** Who runs the panel, and the way out (browser panel); a banner while the recovery link is in use. */
export function CallerBadge() {
  const info = useOp('server.info', {})
  const caller = info.data?.caller
  if (!caller) return null
  const label = caller.kind === 'recovery' ? 'Recovery link' : caller.email ? `${caller.name} (${caller.email})` : caller.name
  return (
    <Group gap="xs" wrap="nowrap">
      <Tooltip
        label={
          caller.kind === 'recovery'
            ? 'Opened with the recovery link: create or promote an administrator under Users, then sign in as them'
            : caller.access === 'limited'
              ? 'Your role may view every section and change only what its permissions allow'
              : caller.kind === 'os-account'
                ? 'The desktop app acts as the operating-system account running it'
                : 'Signed in as an administrator'
        }
        withArrow
      >
        <Text size="sm" fw={500} data-testid="panel-caller" style={{ whiteSpace: 'nowrap' }} visibleFrom="sm">
          {label}
          {caller.access === 'limited' ? ' · view only' : ''}
        </Text>
      </Tooltip>
      {transport() === 'http' && caller.kind === 'admin' && <AddPasskey />}
      {transport() === 'http' && (
        <Button size="xs" variant="default" onClick={() => void signOutOfPanel()} data-testid="panel-sign-out">
          Sign out
        </Button>
      )}
    </Group>
  )
}

/**
 * "Add a passkey for this panel": a passkey of this browser on the signed-in admin's account, bound
 * to this panel's address (an ordinary passkey of theirs, named so they recognise it). On the IP
 * address, where passkeys cannot work, it points to the localhost address instead.
 */
function AddPasskey() {
  const options = useSignInOptions().data
  const [busy, setBusy] = useState(false)
  if (!options?.passkey) return null
  if (!passkeysWorkHere()) {
    return (
      <Tooltip label={`Passkeys work at ${options.passkeyOrigin}, not at an IP address`} withArrow>
        <Anchor href={options.passkeyOrigin} size="xs" data-testid="panel-passkey-localhost" visibleFrom="md">
          Passkeys: open at localhost
        </Anchor>
      </Tooltip>
    )
  }
  return (
    <Tooltip label="A passkey of this browser for signing in to this panel, kept with your account's passkeys" withArrow>
      <Button
        size="xs"
        variant="default"
        leftSection={<IconKey size={14} />}
        loading={busy}
        data-testid="panel-add-passkey"
        onClick={async () => {
          setBusy(true)
          try {
            const failed = await addPanelPasskey()
            notifications.show(
              failed
                ? { color: 'red', title: 'No passkey added', message: failed }
                : { color: 'teal', title: 'Passkey added', message: `Sign in to this panel with it next time (${panelPasskeyName()}).` },
            )
          } finally {
            setBusy(false)
          }
        }}
      >
        Add a passkey
      </Button>
    </Tooltip>
  )
}
