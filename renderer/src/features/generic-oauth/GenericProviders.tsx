import {
  Badge,
  Button,
  Card,
  Code,
  Drawer,
  Group,
  PasswordInput,
  Stack,
  Switch,
  Table,
  TagsInput,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { useForm } from '@mantine/form'
import { notifications } from '@mantine/notifications'
import { IconDeviceFloppy, IconPlus, IconSettings, IconTrash } from '@tabler/icons-react'
import { useState } from 'react'
import type { GenericProviderView } from '../../../../server/features/generic-oauth/panel-contract'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { Allowed, Editable } from '../../access'
import { ErrorNotice, Loading } from '../../components/common'
import { TestSignIn } from '../social/TestSignIn'

const FIELDS = ['providerId', 'name', 'discoveryUrl', 'authorizationUrl', 'tokenUrl', 'userInfoUrl', 'clientId', 'clientSecret', 'scopes']

const PROVIDER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** An http(s) URL, or the reason it is not one (the config schema's rule, said before Save). */
const urlProblem = (value: string): string | null => {
  if (!value) return null
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:' ? null : 'must start with https:// or http://'
  } catch {
    return 'not a URL'
  }
}

/** The form's checks, run before Save is sent (the server checks again, and fetches the discovery document). */
const validate = {
  providerId: (v: string) =>
    !v ? 'required' : PROVIDER_ID.test(v) ? null : 'letters, digits, ".", "_" and "-", at most 64, starting with a letter or digit',
  clientId: (v: string) => (v.trim() ? null : 'required'),
  discoveryUrl: (v: string, values: { authorizationUrl: string; tokenUrl: string }) =>
    urlProblem(v) ?? (v || (values.authorizationUrl && values.tokenUrl) ? null : 'needs discoveryUrl, or authorizationUrl and tokenUrl'),
  authorizationUrl: urlProblem,
  tokenUrl: urlProblem,
  userInfoUrl: urlProblem,
}

/** A new provider's form: an OpenID provider by its discovery document is the usual case. */
const BLANK: GenericProviderView = {
  providerId: '',
  name: '',
  discoveryUrl: '',
  authorizationUrl: '',
  tokenUrl: '',
  userInfoUrl: '',
  clientId: '',
  hasClientSecret: false,
  scopes: ['email', 'profile'],
  pkce: true,
  redirectURI: '',
}

/** The fields a save sends when changed (the secret apart: sent when typed, never read). */
const SAVED_FIELDS = ['name', 'discoveryUrl', 'authorizationUrl', 'tokenUrl', 'userInfoUrl', 'clientId', 'scopes', 'pkce'] as const

/** A provider as the form holds it (the name empty when it is the id). */
function formValuesOf(p: GenericProviderView) {
  return {
    providerId: p.providerId,
    name: p.name === p.providerId ? '' : p.name,
    discoveryUrl: p.discoveryUrl,
    authorizationUrl: p.authorizationUrl,
    tokenUrl: p.tokenUrl,
    userInfoUrl: p.userInfoUrl,
    clientId: p.clientId,
    scopes: p.scopes,
    pkce: p.pkce,
  }
}

function GenericProviderForm({
  provider,
  onSaved,
  onRemoved,
}: {
  provider: GenericProviderView | null
  onSaved: (id: string) => void
  onRemoved: () => void
}) {
  const isNew = provider === null
  const initial = provider ?? BLANK
  const save = useOpMutation('genericOAuth.save')
  const remove = useOpMutation('genericOAuth.remove')
  const form = useForm({
    initialValues: { ...formValuesOf(initial), clientSecret: '' },
    validate,
    validateInputOnBlur: true,
  })
  /** An endpoint field's complaint opens the folded Endpoints section, so it is seen. */
  const endpointError = Boolean(form.errors.authorizationUrl || form.errors.tokenUrl || form.errors.userInfoUrl)
  // The provider as this form read it: a save of a stored provider sends only the fields changed,
  // each with its read value (another admin's change since: 409, shown beside the field).
  const [read, setRead] = useState(provider)
  const submit = form.onSubmit(async (values) => {
    try {
      const shown = read ? formValuesOf(read) : null
      const changed = shown ? SAVED_FIELDS.filter((f) => JSON.stringify(values[f]) !== JSON.stringify(shown[f])) : SAVED_FIELDS
      const input = {
        providerId: values.providerId,
        ...Object.fromEntries(changed.map((f) => [f, values[f]])),
        clientSecret: values.clientSecret || undefined,
        ...(read ? { base: Object.fromEntries(changed.map((f) => [f, read[f]])) } : {}),
      }
      const saved = await save.mutateAsync(input)
      // The form shows what is stored now (another admin's fields included), the next save's base.
      setRead(saved)
      form.setValues({ ...formValuesOf(saved), clientSecret: '' })
      form.resetDirty()
      notifications.show({ color: 'teal', title: `${saved.name} saved`, message: 'Sign-in offers it at once.' })
      onSaved(saved.providerId)
    } catch (e) {
      const error = e as PanelCallError
      for (const field of FIELDS) {
        const message = error.messageFor(field)
        if (message) form.setFieldError(field, message)
      }
      notifications.show({ color: 'red', title: 'Provider not saved', message: error.message })
    }
  })
  return (
    <Stack gap="lg">
      {provider && (
        <div>
          <Text size="sm" fw={500}>
            Redirect URI to register with the provider
          </Text>
          <Code style={{ wordBreak: 'break-all' }} data-testid="generic-redirect-uri">
            {provider.redirectURI}
          </Code>
        </div>
      )}
      <form onSubmit={submit}>
        <Editable op={['genericOAuth.save', 'genericOAuth.remove']} note>
          <Stack gap="sm">
            <TextInput
              label="Provider id"
              description="Used in /sign-in/social and in the callback path /callback/<id>; letters, digits, '.', '_' and '-'."
              disabled={!isNew}
              withAsterisk
              aria-required
              {...form.getInputProps('providerId')}
            />
            <TextInput label="Button name" description="Shown on the sign-in page (default: the id)." {...form.getInputProps('name')} />
            <TextInput
              label="Discovery URL"
              description="The provider's .well-known/openid-configuration (Keycloak, authentik, Entra, Google Workspace…). Or leave empty and give the endpoints below."
              {...form.getInputProps('discoveryUrl')}
            />
            <details open={endpointError || undefined}>
              <summary>
                <Text span size="sm">
                  Endpoints (plain OAuth 2.0, or overriding discovery)
                </Text>
              </summary>
              <Stack gap="xs" mt="xs">
                <TextInput size="xs" label="Authorization URL" {...form.getInputProps('authorizationUrl')} />
                <TextInput size="xs" label="Token URL" {...form.getInputProps('tokenUrl')} />
                <TextInput size="xs" label="User info URL" {...form.getInputProps('userInfoUrl')} />
              </Stack>
            </details>
            <TextInput label="Client id" withAsterisk aria-required {...form.getInputProps('clientId')} />
            <PasswordInput
              label="Client secret"
              description={initial.hasClientSecret ? 'Stored (encrypted). Leave empty to keep it.' : 'Not set yet.'}
              placeholder={initial.hasClientSecret ? '••••••••' : ''}
              {...form.getInputProps('clientSecret')}
            />
            <TagsInput label="Scopes" description="openid is added for an OpenID provider." {...form.getInputProps('scopes')} />
            <Switch
              label="PKCE (S256)"
              description="Turn off only for a provider that refuses it."
              {...form.getInputProps('pkce', { type: 'checkbox' })}
            />
            <Group justify="space-between">
              {provider ? (
                <Button
                  variant="subtle"
                  color="red"
                  leftSection={<IconTrash size={16} />}
                  loading={remove.isPending}
                  onClick={() =>
                    remove.mutate(
                      { providerId: provider.providerId },
                      {
                        onSuccess: () => {
                          notifications.show({
                            color: 'teal',
                            title: `${provider.name} removed`,
                            message: 'It is no longer offered for sign-in.',
                          })
                          onRemoved()
                        },
                        onError: (e) => notifications.show({ color: 'red', title: 'Not removed', message: e.message }),
                      },
                    )
                  }
                >
                  Remove
                </Button>
              ) : (
                <span />
              )}
              <Button type="submit" leftSection={<IconDeviceFloppy size={16} />} loading={save.isPending}>
                {isNew ? 'Add provider' : 'Save'}
              </Button>
            </Group>
          </Stack>
        </Editable>
      </form>
      {provider && (
        <div>
          <Text size="sm" fw={500} mb={4}>
            Try it
          </Text>
          <TestSignIn provider={{ id: provider.providerId, name: provider.name }} />
        </div>
      )}
    </Stack>
  )
}

/**
 * The Providers view's generic OAuth section (genericOAuth.config): any OpenID Connect or OAuth 2.0
 * provider, added, tested and removed here; sign-in offers it beside the built-in ones.
 */
export function GenericProviders() {
  const list = useOp('genericOAuth.list', {}, { refetchOnWindowFocus: false })
  /** null: closed; '': adding a new one; else the provider id. */
  const [editing, setEditing] = useState<string | null>(null)
  const current = editing ? (list.data?.find((p) => p.providerId === editing) ?? null) : null
  return (
    <Stack gap="sm" data-testid="generic-providers">
      <Group justify="space-between">
        <div>
          <Title order={3} size="h4">
            OpenID Connect and OAuth 2.0 providers
          </Title>
          <Text size="sm" c="dimmed">
            Your own identity provider: Keycloak, authentik, Entra ID, Google Workspace or any other.
          </Text>
        </div>
        <Allowed op="genericOAuth.save">
          <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing('')}>
            Add provider
          </Button>
        </Allowed>
      </Group>
      <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
      {!list.data ? (
        !list.error && <Loading />
      ) : list.data.length === 0 ? (
        <Text size="sm" c="dimmed">
          None yet.
        </Text>
      ) : (
        <Card withBorder padding={0}>
          <Table verticalSpacing="xs" data-testid="generic-providers-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Provider</Table.Th>
                <Table.Th>Kind</Table.Th>
                <Table.Th>Redirect URI</Table.Th>
                <Table.Th>
                  <span style={{ position: 'absolute', width: 1, height: 1, overflow: 'hidden', clip: 'rect(0 0 0 0)' }}>Actions</span>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.data.map((p) => (
                <Table.Tr key={p.providerId} data-testid={`generic-${p.providerId}`}>
                  <Table.Td>
                    <Text size="sm" fw={500}>
                      {p.name}
                    </Text>
                    <Text size="xs" c="dimmed" ff="monospace">
                      {p.providerId}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="outline" color="gray.8">
                      {p.discoveryUrl ? 'OpenID discovery' : 'OAuth 2.0'}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    <Text size="xs" ff="monospace" style={{ wordBreak: 'break-all' }}>
                      {p.redirectURI}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Button
                      size="xs"
                      variant="default"
                      leftSection={<IconSettings size={14} />}
                      onClick={() => setEditing(p.providerId)}
                      aria-label={`Configure ${p.name}`}
                    >
                      Configure
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      )}
      <Drawer
        opened={editing !== null}
        onClose={() => setEditing(null)}
        position="right"
        size="lg"
        title={current ? `${current.name} sign-in` : 'Add an OpenID Connect or OAuth 2.0 provider'}
        data-testid="generic-provider-drawer"
      >
        {editing !== null && (
          <GenericProviderForm
            key={editing || 'new'}
            provider={current}
            onSaved={(id) => setEditing(id)}
            onRemoved={() => setEditing(null)}
          />
        )}
      </Drawer>
    </Stack>
  )
}
