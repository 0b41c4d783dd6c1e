import { Alert, Anchor, Button, Card, Code, CopyButton, Group, Loader, NativeSelect, Stack, Text, TextInput } from '@mantine/core'
import { type FormEvent, useCallback, useEffect, useState } from 'react'
import type { PageProps } from '../page-props'
import { ApiError, api, pageURL } from '../api'
import { FormAlert, Layout } from '../Layout'

/** GET {basePath}/app-password/list: the person's app passwords (never the secret). */
interface AppPassword {
  id: string
  name: string
  hint: string
  createdAt: number
  expiresAt: number | null
  lastUsedAt: number | null
  expired: boolean
}

interface Created {
  id: string
  name: string
  password: string
  expiresAt: number | null
}

const EXPIRY: Array<{ value: string; label: string }> = [
  { value: '', label: 'Never' },
  { value: String(30 * 86_400), label: 'In 30 days' },
  { value: String(90 * 86_400), label: 'In 90 days' },
  { value: String(365 * 86_400), label: 'In one year' },
]

const when = (ms: number) => new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })

/** The new secret, shown once with a copy button. */
function NewPassword({ created, onDone }: { created: Created; onDone: () => void }) {
  return (
    <Alert
      color="teal"
      variant="light"
      title={
        <Text fw={700} size="sm" c="bright">
          App password for {created.name}
        </Text>
      }
      data-testid="new-app-password"
    >
      <Stack gap="xs">
        <Text size="sm" c="bright">
          Copy it now: it is shown only once. Use it instead of your password in that app.
        </Text>
        <Group gap="xs" wrap="nowrap">
          <Code fz="md" data-testid="new-app-password-secret" style={{ wordBreak: 'break-all' }}>
            {created.password}
          </Code>
          <CopyButton value={created.password}>
            {({ copied, copy }) => (
              <Button size="xs" variant="light" onClick={copy}>
                {copied ? 'Copied' : 'Copy'}
              </Button>
            )}
          </CopyButton>
        </Group>
        <Button size="xs" variant="subtle" onClick={onDone} style={{ alignSelf: 'flex-start' }}>
          Done
        </Button>
      </Stack>
    </Alert>
  )
}

/** One app password: its name, hint, dates, and Revoke. */
function PasswordCard({ item, busy, onRevoke }: { item: AppPassword; busy: boolean; onRevoke: () => void }) {
  return (
    <Card withBorder padding="sm" data-testid={`app-password-${item.id}`}>
      <Group justify="space-between" align="flex-start" wrap="nowrap">
        <Stack gap={2}>
          <Text fw={600}>{item.name}</Text>
          <Text size="xs" c="dimmed">
            Ends in …{item.hint} · created {when(item.createdAt)}
          </Text>
          <Text size="xs" c="dimmed">
            {item.lastUsedAt ? `Last used ${when(item.lastUsedAt)}` : 'Never used'}
            {item.expiresAt ? ` · ${item.expired ? 'expired' : 'expires'} ${when(item.expiresAt)}` : ''}
          </Text>
        </Stack>
        <Button color="red" variant="light" size="xs" loading={busy} onClick={onRevoke} aria-label={`Revoke ${item.name}`}>
          Revoke
        </Button>
      </Group>
    </Card>
  )
}

/**
 * "App passwords" (`/ui/account/app-passwords`): passwords for one device or app each, for clients
 * that cannot ask for a second factor (an LDAP login on a NAS, a media server). Create (name,
 * optional expiry; the secret is shown once), see when each was last used, revoke.
 */
export function AppPasswordsPage({ config }: PageProps) {
  const [items, setItems] = useState<AppPassword[] | null>(null)
  const [signedOut, setSignedOut] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [stale, setStale] = useState(false)
  const [name, setName] = useState('')
  const [expiresIn, setExpiresIn] = useState('')
  const [creating, setCreating] = useState(false)
  const [created, setCreated] = useState<Created | null>(null)
  const [busy, setBusy] = useState<string | null>(null)

  const load = useCallback(() => {
    api<{ appPasswords: AppPassword[] }>('/app-password/list')
      .then((answer) => setItems(answer.appPasswords))
      .catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 401) setSignedOut(true)
        else setError((e as Error).message)
      })
  }, [])
  useEffect(load, [load])

  const create = async (event: FormEvent) => {
    event.preventDefault()
    setCreating(true)
    setError(null)
    setStale(false)
    try {
      const answer = await api<Created>('/app-password/create', { name, ...(expiresIn ? { expiresIn: Number(expiresIn) } : {}) })
      setCreated(answer)
      setName('')
      load()
    } catch (e) {
      if (e instanceof ApiError && e.code === 'SESSION_NOT_FRESH') setStale(true)
      else setError((e as Error).message)
    } finally {
      setCreating(false)
    }
  }

  const revoke = async (id: string) => {
    setBusy(id)
    setError(null)
    try {
      await api('/app-password/revoke', { id })
      setItems((current) => (current ?? []).filter((p) => p.id !== id))
      if (created?.id === id) setCreated(null)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(null)
    }
  }

  if (signedOut) {
    return (
      <Layout config={config} title="App passwords">
        <Text>
          <Anchor href={pageURL('sign-in', { returnTo: location.href })}>Sign in</Anchor> to manage your app passwords.
        </Text>
      </Layout>
    )
  }
  return (
    <Layout config={config} title="App passwords">
      <Text size="sm" c="dimmed">
        An app password lets one device or app (a NAS, a media server, a mail client) sign in with your {config.appName} account where it
        cannot ask for your second factor. Make one per app, so you can revoke it alone.
      </Text>
      <FormAlert message={error} />
      {stale ? (
        <Alert color="yellow" variant="light" role="alert" title="Sign in again">
          <Text size="sm" c="bright">
            For your safety, creating an app password needs a recent sign-in.{' '}
            <Anchor href={pageURL('sign-in', { returnTo: location.href })}>Sign in again</Anchor>, then come back.
          </Text>
        </Alert>
      ) : null}
      {created ? <NewPassword created={created} onDone={() => setCreated(null)} /> : null}
      <form onSubmit={(e) => void create(e)}>
        <Stack gap="sm">
          <TextInput
            label="Name"
            description="What it is for, e.g. NAS"
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            required
            maxLength={64}
          />
          <NativeSelect label="Expires" data={EXPIRY} value={expiresIn} onChange={(e) => setExpiresIn(e.currentTarget.value)} />
          <Button type="submit" loading={creating} disabled={!name.trim()}>
            Create app password
          </Button>
        </Stack>
      </form>
      {items === null && !error ? (
        <Group justify="center">
          <Loader size="sm" />
        </Group>
      ) : null}
      {items?.length === 0 ? <Text data-testid="no-app-passwords">You have no app passwords.</Text> : null}
      <Stack gap="sm" data-testid="app-passwords">
        {(items ?? []).map((p) => (
          <PasswordCard key={p.id} item={p} busy={busy === p.id} onRevoke={() => void revoke(p.id)} />
        ))}
      </Stack>
    </Layout>
  )
}
