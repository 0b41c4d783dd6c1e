import { Alert, Anchor, Button, Card, Group, Stack, Text, TextInput } from '@mantine/core'
import { startRegistration } from '@simplewebauthn/browser'
import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react'
import { ApiError, api, pageURL } from '../api'
import type { PageProps } from '../page-props'
import { AccountPage, FocusedAlert, useFocusFirstInvalid, when } from './common'

/** `GET /passkey/list-user-passkeys` (better-auth's passkey rows; the page shows these fields). */
interface Passkey {
  id: string
  name?: string | null
  createdAt?: string | null
  deviceType?: string | null
  backedUp?: boolean | null
}

const nameOf = (p: Passkey) => p.name || 'Unnamed passkey'

/** One passkey: its name, when it was added, Rename (in place) and Remove. */
function PasskeyCard({ item, onChanged, onError }: { item: Passkey; onChanged: (notice: string) => void; onError: (m: string) => void }) {
  const [renaming, setRenaming] = useState(false)
  const [busy, setBusy] = useState(false)
  const [fieldError, setFieldError] = useState<string | null>(null)
  const form = useRef<HTMLFormElement>(null)
  const focusInvalid = useFocusFirstInvalid(form)

  const rename = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const name = String(new FormData(event.currentTarget).get('name') ?? '').trim()
    if (!name) {
      setFieldError('Enter a name')
      focusInvalid()
      return
    }
    setBusy(true)
    try {
      await api('/passkey/update-passkey', { id: item.id, name })
      setRenaming(false)
      onChanged(`Renamed to ${name}.`)
    } catch (e) {
      setFieldError((e as Error).message)
      focusInvalid()
    } finally {
      setBusy(false)
    }
  }

  const remove = async () => {
    setBusy(true)
    try {
      await api('/passkey/delete-passkey', { id: item.id })
      onChanged(`${nameOf(item)} was removed.`)
    } catch (e) {
      onError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <Card withBorder padding="sm" data-testid={`passkey-${item.id}`}>
      {renaming ? (
        <form ref={form} onSubmit={(e) => void rename(e)} noValidate aria-label={`Rename ${nameOf(item)}`}>
          <Stack gap="xs">
            <TextInput name="name" label="Name" defaultValue={item.name ?? ''} maxLength={64} required error={fieldError} autoFocus />
            <Group gap="xs">
              <Button type="submit" size="xs" loading={busy}>
                Save
              </Button>
              <Button size="xs" variant="default" onClick={() => setRenaming(false)}>
                Cancel
              </Button>
            </Group>
          </Stack>
        </form>
      ) : (
        <Group justify="space-between" align="flex-start" wrap="nowrap">
          <Stack gap={2}>
            <Text fw={600}>{nameOf(item)}</Text>
            <Text size="xs" c="dimmed">
              {item.createdAt ? `Added ${when(item.createdAt)}` : 'Added earlier'}
              {item.backedUp ? ' · synced' : item.deviceType === 'singleDevice' ? ' · this device only' : ''}
            </Text>
          </Stack>
          <Group gap="xs" wrap="nowrap">
            <Button size="xs" variant="default" onClick={() => setRenaming(true)} aria-label={`Rename ${nameOf(item)}`}>
              Rename
            </Button>
            <Button
              size="xs"
              color="red"
              variant="outline"
              loading={busy}
              onClick={() => void remove()}
              aria-label={`Remove ${nameOf(item)}`}
            >
              Remove
            </Button>
          </Group>
        </Group>
      )}
    </Card>
  )
}

/**
 * "Passkeys" (`/ui/account/passkeys`): sign in with the device's lock instead of a password. Add one
 * (named; `generate-register-options`, the browser's WebAuthn, `verify-registration`), rename,
 * remove: the endpoints apps call.
 */
export function AccountPasskeysPage({ config }: PageProps) {
  return (
    <AccountPage config={config} title="Passkeys">
      {() => <PasskeysBody />}
    </AccountPage>
  )
}

function PasskeysBody() {
  const [items, setItems] = useState<Passkey[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [stale, setStale] = useState(false)
  const [notice, setNotice] = useState<string | null>(null)
  const [adding, setAdding] = useState(false)
  const [name, setName] = useState('')

  const load = useCallback(
    () =>
      api<Passkey[]>('/passkey/list-user-passkeys')
        .then(setItems)
        .catch((e: unknown) => setError((e as Error).message)),
    [],
  )
  useEffect(() => void load(), [load])

  const add = async (event: FormEvent) => {
    event.preventDefault()
    setAdding(true)
    setError(null)
    setStale(false)
    setNotice(null)
    try {
      const optionsJSON = await api<Parameters<typeof startRegistration>[0]['optionsJSON']>('/passkey/generate-register-options')
      let response: Awaited<ReturnType<typeof startRegistration>>
      try {
        response = await startRegistration({ optionsJSON })
      } catch {
        setError('The passkey was not created: the request was cancelled or your device refused it. Try again.')
        return
      }
      const label = name.trim()
      await api('/passkey/verify-registration', { response, ...(label ? { name: label } : {}) })
      await load()
      setNotice(`${label || 'Your passkey'} was added.`)
      setName('')
    } catch (e) {
      if (e instanceof ApiError && e.code === 'SESSION_NOT_FRESH') setStale(true)
      else setError((e as Error).message)
    } finally {
      setAdding(false)
    }
  }

  return (
    <Stack gap="md">
      <Text size="sm" c="dimmed">
        A passkey signs you in with your device's fingerprint, face or PIN instead of a password, and cannot be phished.
      </Text>
      {notice ? (
        <Text role="status" data-testid="passkeys-notice">
          {notice}
        </Text>
      ) : null}
      <FocusedAlert message={error} />
      {stale ? (
        <Alert color="yellow" variant="light" role="alert" title="Sign in again">
          <Text size="sm" c="bright">
            For your safety, adding a passkey needs a recent sign-in.{' '}
            <Anchor href={pageURL('sign-in', { returnTo: location.href })}>Sign in again</Anchor>, then come back.
          </Text>
        </Alert>
      ) : null}
      <form onSubmit={(e) => void add(e)} aria-label="Add a passkey">
        <Stack gap="sm">
          <TextInput
            label="Name"
            description="Which device or key it is, e.g. Work laptop"
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            maxLength={64}
          />
          <Button type="submit" loading={adding} style={{ alignSelf: 'flex-start' }}>
            Add a passkey
          </Button>
        </Stack>
      </form>
      {items?.length === 0 ? <Text data-testid="no-passkeys">You have no passkeys.</Text> : null}
      <Stack gap="sm" data-testid="passkeys">
        {(items ?? []).map((p) => (
          <PasskeyCard
            key={p.id}
            item={p}
            onChanged={(message) => {
              setError(null)
              void load().then(() => setNotice(message))
            }}
            onError={setError}
          />
        ))}
      </Stack>
    </Stack>
  )
}
