import { Badge, Button, Group, Loader, Text, TextInput } from '@mantine/core'
import { useEffect, useState } from 'react'
import type { PageProps } from '../page-props'
import { ApiError, api, basePath, pageURL } from '../api'
import { FormAlert, Layout } from '../Layout'

/** GET /device's answer: the client and scope only for the person who claimed the request. */
interface Verification {
  user_code: string
  status: 'pending' | 'approved' | 'denied'
  client_id?: string | null
  scope?: string | null
}

type State =
  | { kind: 'enter'; error: string | null }
  | { kind: 'loading' }
  | { kind: 'signed-out' }
  | { kind: 'review'; request: Verification; email: string }
  | { kind: 'someone-else' }
  | { kind: 'settled'; status: 'approved' | 'denied' }
  | { kind: 'done'; approved: boolean }

const codeOf = () => new URLSearchParams(location.search).get('user_code')?.trim() ?? ''

/**
 * The device endpoints answer refusals in OAuth's words, `{error, error_description}` (the shared
 * api() reads better-auth's `{code, message}`): same request, their error read here.
 */
async function deviceApi<T>(path: string, body?: unknown): Promise<T> {
  let response: Response
  try {
    response = await fetch(`${basePath}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    })
  } catch {
    throw new ApiError(0, 'NETWORK_ERROR', 'The server could not be reached. Check your connection and try again.')
  }
  const data = (await response.json().catch(() => null)) as Record<string, unknown> | null
  if (!response.ok) {
    const code = typeof data?.error === 'string' ? data.error : typeof data?.code === 'string' ? data.code : `HTTP_${response.status}`
    const message =
      typeof data?.error_description === 'string'
        ? data.error_description
        : typeof data?.message === 'string'
          ? data.message
          : `The request failed (HTTP ${response.status}).`
    throw new ApiError(response.status, code, message)
  }
  return data as T
}

/** The page's state for a user code: GET /device (which claims it when signed in) and the session. */
async function load(userCode: string): Promise<State> {
  try {
    const session = await api<{ user: { email: string } } | null>('/get-session')
    // Asked signed out too, so a mistyped or expired code is said before any sign-in.
    const request = await deviceApi<Verification>(`/device?user_code=${encodeURIComponent(userCode)}`)
    if (!session) return { kind: 'signed-out' }
    if (request.status !== 'pending') return { kind: 'settled', status: request.status }
    if (!request.client_id) return { kind: 'someone-else' }
    return { kind: 'review', request, email: session.user.email }
  } catch (e) {
    const message =
      e instanceof ApiError && e.code === 'invalid_request'
        ? 'That code is not valid. Check the code your device shows and try again.'
        : e instanceof ApiError && e.code === 'expired_token'
          ? 'That code has expired. Start again on your device to get a new one.'
          : (e as Error).message
    return { kind: 'enter', error: message }
  }
}

/**
 * Device authorization (RFC 8628): the `verification_uri` a CLI, a TV or a kiosk shows. A person
 * types the user code (or arrives with `?user_code=` from verification_uri_complete), signs in if
 * needed and comes back here (returnTo), sees which client asks and for what, and approves or
 * denies it. Opening the code signed in (GET /device) makes the request theirs to decide.
 */
export function DevicePage({ config }: PageProps) {
  const [code, setCode] = useState(codeOf)
  const [state, setState] = useState<State>(() => (codeOf() ? { kind: 'loading' } : { kind: 'enter', error: null }))
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)

  const open = (userCode: string) => {
    setState({ kind: 'loading' })
    void load(userCode).then(setState)
  }

  useEffect(() => {
    const initial = codeOf()
    if (initial) void load(initial).then(setState)
  }, [])

  const submit = (e: React.FormEvent) => {
    e.preventDefault()
    const typed = code.trim()
    if (!typed) return setState({ kind: 'enter', error: 'Enter the code your device shows.' })
    // The code goes into the address, so a sign-in on the way comes back to it.
    history.replaceState(null, '', pageURL('device', { user_code: typed }))
    open(typed)
  }

  const decide = async (approve: boolean) => {
    if (state.kind !== 'review') return
    setBusy(true)
    setError(null)
    try {
      await deviceApi(approve ? '/device/approve' : '/device/deny', { userCode: state.request.user_code })
      setState({ kind: 'done', approved: approve })
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  if (state.kind === 'loading') {
    return (
      <Layout config={config} title="Connect a device">
        <Loader size="sm" />
      </Layout>
    )
  }
  if (state.kind === 'enter') {
    return (
      <Layout config={config} title="Connect a device">
        <form onSubmit={submit}>
          <Text mb="sm">Enter the code shown on your device.</Text>
          <FormAlert message={state.error} />
          <TextInput
            label="Device code"
            placeholder="ABCD-EFGH"
            value={code}
            onChange={(e) => setCode(e.currentTarget.value)}
            autoFocus
            autoComplete="off"
            autoCapitalize="characters"
            spellCheck={false}
            data-testid="device-code-input"
          />
          <Button type="submit" fullWidth mt="md" data-testid="device-code-submit">
            Continue
          </Button>
        </form>
      </Layout>
    )
  }
  if (state.kind === 'signed-out') {
    return (
      <Layout config={config} title="Connect a device">
        <Text>Sign in to connect the device showing the code {codeOf()}.</Text>
        <Button component="a" href={pageURL('sign-in', { returnTo: location.href })} data-testid="device-sign-in">
          Sign in
        </Button>
      </Layout>
    )
  }
  if (state.kind === 'someone-else') {
    return (
      <Layout config={config} title="Connect a device">
        <FormAlert message="This code is being answered from another account. Start again on your device to get a new code." />
      </Layout>
    )
  }
  if (state.kind === 'settled') {
    return (
      <Layout config={config} title="Connect a device">
        <Text data-testid="device-settled">
          This code was already {state.status === 'approved' ? 'approved' : 'denied'}. You can close this page.
        </Text>
      </Layout>
    )
  }
  if (state.kind === 'done') {
    return (
      <Layout config={config} title={state.approved ? 'Device connected' : 'Request denied'}>
        <Text data-testid="device-done">
          {state.approved
            ? 'The device is now signed in. Return to it to continue.'
            : 'The device was not signed in. You can close this page.'}
        </Text>
      </Layout>
    )
  }
  const { request, email } = state
  const scopes = (request.scope ?? '').split(' ').filter(Boolean)
  return (
    <Layout config={config} title="Connect a device">
      <Text data-testid="device-summary">
        <b>{request.client_id}</b> asks to sign in to {config.appName} as {email}.
      </Text>
      {scopes.length > 0 ? (
        <Group gap={6} data-testid="device-scopes">
          {scopes.map((scope) => (
            <Badge key={scope} variant="light">
              {scope}
            </Badge>
          ))}
        </Group>
      ) : null}
      <Text size="sm" c="dimmed">
        Only approve if this code {request.user_code} is shown on a device you are using now.
      </Text>
      <FormAlert message={error} />
      <Group grow>
        <Button onClick={() => void decide(true)} loading={busy} data-testid="device-approve">
          Approve
        </Button>
        <Button variant="default" onClick={() => void decide(false)} disabled={busy} data-testid="device-deny">
          Deny
        </Button>
      </Group>
    </Layout>
  )
}
