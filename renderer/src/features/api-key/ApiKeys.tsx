import {
  ActionIcon,
  Alert,
  Badge,
  Button,
  Card,
  Code,
  CopyButton,
  Group,
  Modal,
  NumberInput,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
  Tooltip,
} from '@mantine/core'
import { IconCheck, IconCopy, IconKey, IconPlus, IconSearch, IconTrash } from '@tabler/icons-react'
import { useState } from 'react'
import { useOp, useOpMutation, useRereading } from '../../api'
import { ConfirmButton, ErrorNotice, Loading, PageHeader } from '../../components/common'
import { Allowed, Editable } from '../../access'
import { UserPicker } from '../../components/UserPicker'
import { Ago, dateTime } from '../../format'
import { ink } from '../../ink'

/** `#/api-keys?user=<id>` shows one user's keys. */
const userFromHash = (): string => new URLSearchParams(window.location.hash.split('?')[1] ?? '').get('user') ?? ''

function Settings() {
  const settings = useOp('apiKey.settings', {})
  const configure = useOpMutation('apiKey.configure')
  const rereading = useRereading('apiKey.settings')
  if (!settings.data) return settings.error ? <ErrorNotice error={settings.error} onRetry={() => void settings.refetch()} /> : <Loading />
  const s = settings.data as { enabled: boolean; enableSessionForAPIKeys: boolean; apiKeyHeaders: string | string[] }
  // One switch at a time, over the value shown: another admin's change since is refused (409), not undone.
  const set = (patch: Record<string, boolean>) =>
    configure.mutate({
      patch,
      base: Object.fromEntries(Object.keys(patch).map((key) => [`apiKey.${key}`, s[key as keyof typeof s] ?? null])),
    })
  return (
    <Card withBorder>
      <Editable op="apiKey.configure">
        <Stack gap="xs">
          <Switch
            label="API keys enabled"
            description="Off: the /api-key/* endpoints answer 404"
            checked={s.enabled}
            disabled={configure.isPending || rereading}
            onChange={(e) => set({ enabled: e.currentTarget.checked })}
            data-testid="apikey-enabled"
          />
          <Switch
            label="A key acts as its owner's session (enableSessionForAPIKeys)"
            checked={s.enableSessionForAPIKeys}
            disabled={configure.isPending || rereading}
            onChange={(e) => set({ enableSessionForAPIKeys: e.currentTarget.checked })}
            data-testid="apikey-session"
          />
          <Text size="sm" c="dimmed">
            Header: <Code>{Array.isArray(s.apiKeyHeaders) ? s.apiKeyHeaders.join(', ') : s.apiKeyHeaders}</Code>
          </Text>
          <ErrorNotice error={configure.error} />
        </Stack>
      </Editable>
    </Card>
  )
}

function CreateKey({ defaultUser, onCreated }: { defaultUser: string; onCreated: (key: string) => void }) {
  const create = useOpMutation('apiKey.create')
  const [userId, setUserId] = useState<string | null>(defaultUser || null)
  const [ownerError, setOwnerError] = useState<string | null>(null)
  const [name, setName] = useState('')
  const [days, setDays] = useState<number | string>('')
  const [remaining, setRemaining] = useState<number | string>('')
  return (
    <Card withBorder>
      <Stack gap="xs">
        <Group grow align="flex-end">
          <UserPicker
            label="Owner"
            value={userId}
            onChange={(v) => {
              setUserId(v)
              setOwnerError(null)
            }}
            error={ownerError}
            testId="apikey-owner"
          />
          <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} data-testid="apikey-name" />
          <NumberInput label="Expires in (days)" value={days} onChange={setDays} min={1} placeholder="never" />
          <NumberInput label="Uses (remaining)" value={remaining} onChange={setRemaining} min={0} placeholder="unlimited" />
        </Group>
        <Group justify="flex-end">
          <Button
            leftSection={<IconPlus size={16} />}
            loading={create.isPending}
            disabled={!userId}
            data-testid="apikey-create"
            onClick={() =>
              userId &&
              create.mutate(
                {
                  userId,
                  ...(name ? { name } : {}),
                  ...(typeof days === 'number' ? { expiresIn: days * 86_400 } : {}),
                  ...(typeof remaining === 'number' ? { remaining } : {}),
                },
                {
                  onSuccess: (data) => onCreated(data.key),
                  // The owner field's own error (a user that is gone) sits beside it.
                  onError: (e) => setOwnerError(e.field === 'userId' ? e.message : null),
                },
              )
            }
          >
            Create key
          </Button>
        </Group>
        <ErrorNotice error={create.error?.field === 'userId' ? null : create.error} />
      </Stack>
    </Card>
  )
}

/** The secret, shown once. */
function SecretModal({ secret, onClose }: { secret: string | null; onClose: () => void }) {
  return (
    <Modal opened={secret !== null} onClose={onClose} title="New API key" centered size="lg">
      <Stack>
        <Alert color="yellow" icon={<IconKey size={16} />}>
          Copy the key now: it is stored only as a hash and will not be shown again.
        </Alert>
        <Group wrap="nowrap">
          <Code block style={{ flex: 1, wordBreak: 'break-all' }} data-testid="apikey-secret">
            {secret}
          </Code>
          <CopyButton value={secret ?? ''}>
            {({ copied, copy }) => (
              <Tooltip label={copied ? 'Copied' : 'Copy'} withArrow>
                <ActionIcon variant="light" color={copied ? 'teal' : 'gray'} onClick={copy} aria-label="Copy key" data-testid="apikey-copy">
                  {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
                </ActionIcon>
              </Tooltip>
            )}
          </CopyButton>
        </Group>
        <Group justify="flex-end">
          <Button onClick={onClose}>Done</Button>
        </Group>
      </Stack>
    </Modal>
  )
}

export default function ApiKeysPage() {
  const [user] = useState(userFromHash)
  const [search, setSearch] = useState('')
  const [secret, setSecret] = useState<string | null>(null)
  const list = useOp('apiKey.list', { ...(user ? { userId: user } : {}), ...(search ? { search } : {}), limit: 100, offset: 0 })
  const setEnabled = useOpMutation('apiKey.setEnabled')
  const remove = useOpMutation('apiKey.delete')
  return (
    <Stack>
      <PageHeader
        title="API keys"
        description={
          user
            ? `Keys of user ${user}`
            : 'Keys services use instead of a session (x-api-key). Every change and refusal is in the audit log.'
        }
      />
      <Settings />
      <Allowed op="apiKey.create" hide>
        <CreateKey defaultUser={user} onCreated={setSecret} />
      </Allowed>
      <SecretModal secret={secret} onClose={() => setSecret(null)} />
      <TextInput
        leftSection={<IconSearch size={16} />}
        placeholder="Search by owner email, name or id, or key name"
        value={search}
        onChange={(e) => setSearch(e.currentTarget.value)}
        data-testid="apikey-search"
      />
      <ErrorNotice error={list.error ?? setEnabled.error ?? remove.error} />
      {!list.data ? (
        <Loading />
      ) : (
        <Table striped highlightOnHover data-testid="apikey-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Key</Table.Th>
              <Table.Th>Owner</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Last use</Table.Th>
              <Table.Th>Uses left</Table.Th>
              <Table.Th>Expires</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.keys.map((k) => (
              <Table.Tr key={k.id} data-testid={`apikey-row-${k.id}`}>
                <Table.Td>{k.name ?? '—'}</Table.Td>
                <Table.Td>
                  <Code>{k.start ? `${k.start}…` : '—'}</Code>
                </Table.Td>
                <Table.Td>
                  <a href={`#/api-keys?user=${encodeURIComponent(k.referenceId)}`}>{k.ownerEmail ?? k.referenceId}</a>
                </Table.Td>
                <Table.Td>
                  <Badge color={k.enabled ? ink.ok : ink.muted} variant="outline">
                    {k.enabled ? 'enabled' : 'disabled'}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  <Ago when={k.lastRequest} none="never" />
                </Table.Td>
                <Table.Td>{k.remaining ?? '∞'}</Table.Td>
                <Table.Td>{k.expiresAt ? dateTime(k.expiresAt) : 'never'}</Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap" justify="flex-end">
                    <Allowed op="apiKey.setEnabled">
                      <Button
                        size="xs"
                        variant="default"
                        onClick={() => setEnabled.mutate({ keyId: k.id, enabled: !k.enabled })}
                        data-testid={`apikey-toggle-${k.id}`}
                      >
                        {k.enabled ? 'Disable' : 'Enable'}
                      </Button>
                    </Allowed>
                    <Allowed op="apiKey.delete">
                      <ConfirmButton
                        label="Delete"
                        leftSection={<IconTrash size={14} />}
                        title="Delete API key"
                        message={`Requests with ${k.start ?? 'this key'}… are refused from the next one on.`}
                        confirmLabel="Delete"
                        onConfirm={() => remove.mutate({ keyId: k.id })}
                        testId={`apikey-delete-${k.id}`}
                      />
                    </Allowed>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {list.data && (
        <Text size="sm" c="dimmed">
          {list.data.total} key{list.data.total === 1 ? '' : 's'}
        </Text>
      )}
    </Stack>
  )
}
