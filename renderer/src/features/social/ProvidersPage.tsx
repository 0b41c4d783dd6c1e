import {
  ActionIcon,
  Badge,
  Button,
  Card,
  Code,
  CopyButton,
  Drawer,
  Group,
  PasswordInput,
  Stack,
  Switch,
  Table,
  TagsInput,
  Text,
  TextInput,
  ThemeIcon,
  Tooltip,
} from '@mantine/core'
import { useForm } from '@mantine/form'
import { notifications } from '@mantine/notifications'
import {
  IconBrandApple,
  IconBrandDiscord,
  IconBrandDropbox,
  IconBrandFacebook,
  IconBrandGithub,
  IconBrandGitlab,
  IconBrandGoogle,
  IconBrandKick,
  IconBrandLinkedin,
  IconBrandReddit,
  IconBrandSpotify,
  IconBrandTiktok,
  IconBrandTwitch,
  IconBrandVk,
  IconBrandWindows,
  IconBrandX,
  IconBrandZoom,
  IconCheck,
  IconCopy,
  IconDeviceFloppy,
  IconKey,
  IconSettings,
} from '@tabler/icons-react'
import { type ComponentType, useState } from 'react'
import type { ProviderView } from '../../../../server/features/social/panel-contract'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { Editable } from '../../access'
import { GenericProviders } from '../generic-oauth/GenericProviders'
import { TestSignIn } from './TestSignIn'
import { ErrorNotice, Loading, PageHeader } from '../../components/common'
import { ink } from '../../ink'

const LOGOS: Record<string, ComponentType<{ size?: number }>> = {
  apple: IconBrandApple,
  discord: IconBrandDiscord,
  dropbox: IconBrandDropbox,
  facebook: IconBrandFacebook,
  github: IconBrandGithub,
  gitlab: IconBrandGitlab,
  google: IconBrandGoogle,
  kick: IconBrandKick,
  linkedin: IconBrandLinkedin,
  microsoft: IconBrandWindows,
  reddit: IconBrandReddit,
  spotify: IconBrandSpotify,
  tiktok: IconBrandTiktok,
  twitch: IconBrandTwitch,
  twitter: IconBrandX,
  vk: IconBrandVk,
  zoom: IconBrandZoom,
}

const STATUS = {
  enabled: { color: ink.ok, label: 'enabled' },
  configured: { color: ink.info, label: 'configured, off' },
  off: { color: ink.muted, label: 'off' },
} as const

function Logo({ id }: { id: string }) {
  const Icon = LOGOS[id] ?? IconKey
  return (
    <ThemeIcon variant="default" size={32} radius="md" aria-hidden>
      <Icon size={20} />
    </ThemeIcon>
  )
}

function CopyURI({ value }: { value: string }) {
  return (
    <CopyButton value={value}>
      {({ copied, copy }) => (
        <Tooltip label={copied ? 'Copied' : 'Copy'} withArrow>
          <ActionIcon variant="subtle" color="gray" size="sm" onClick={copy} aria-label="Copy redirect URI">
            {copied ? <IconCheck size={14} /> : <IconCopy size={14} />}
          </ActionIcon>
        </Tooltip>
      )}
    </CopyButton>
  )
}

function ProviderDrawer({ provider, onClose }: { provider: ProviderView | null; onClose: () => void }) {
  return (
    <Drawer
      opened={Boolean(provider)}
      onClose={onClose}
      position="right"
      size="lg"
      title={provider ? `${provider.name} sign-in` : 'Provider'}
      data-testid="provider-drawer"
    >
      {provider && <ProviderForm key={provider.id} provider={provider} />}
    </Drawer>
  )
}

function ProviderForm({ provider }: { provider: ProviderView }) {
  const save = useOpMutation('providers.update')
  const form = useForm({
    initialValues: {
      enabled: provider.enabled,
      clientId: provider.clientId,
      clientSecret: '',
      scopes: provider.scopes,
      trustedForLinking: provider.trustedForLinking,
      overrides: Object.fromEntries(provider.overridableEndpoints.map((n) => [n, provider.overrides[n] ?? ''])),
    },
  })
  // The provider as this form read it: only the fields changed are sent, each with its read value
  // (another admin's change since: 409, shown beside the field).
  const [read, setRead] = useState(provider)
  const submit = form.onSubmit(async (values) => {
    try {
      const readValues: Omit<typeof values, 'clientSecret'> = {
        enabled: read.enabled,
        clientId: read.clientId,
        scopes: read.scopes,
        trustedForLinking: read.trustedForLinking,
        overrides: Object.fromEntries(read.overridableEndpoints.map((n) => [n, read.overrides[n] ?? ''])),
      }
      const changed = (Object.keys(readValues) as Array<keyof typeof readValues>).filter(
        (f) => JSON.stringify(values[f]) !== JSON.stringify(readValues[f]),
      )
      const saved = await save.mutateAsync({
        id: provider.id,
        ...Object.fromEntries(changed.map((f) => [f, values[f]])),
        clientSecret: values.clientSecret || undefined,
        base: Object.fromEntries(changed.map((f) => [f, read[f]])),
      })
      // The form shows what is stored now (another admin's fields included), the next save's base.
      setRead(saved)
      form.setValues({
        enabled: saved.enabled,
        clientId: saved.clientId,
        clientSecret: '',
        scopes: saved.scopes,
        trustedForLinking: saved.trustedForLinking,
        overrides: Object.fromEntries(saved.overridableEndpoints.map((n) => [n, saved.overrides[n] ?? ''])),
      })
      form.resetDirty()
      notifications.show({ color: 'teal', title: `${provider.name} saved`, message: 'Sign-in uses the new settings at once.' })
    } catch (e) {
      const error = e as PanelCallError
      // Each field shows the message the server named it in (never read from the message text).
      const fields = [
        'enabled',
        'clientId',
        'clientSecret',
        'scopes',
        'trustedForLinking',
        'overrides',
        ...provider.overridableEndpoints.map((n) => `overrides.${n}`),
      ]
      for (const field of fields) {
        const message = error.messageFor(field)
        if (message) form.setFieldError(field, message)
      }
      notifications.show({ color: 'red', title: `${provider.name} not saved`, message: error.message })
    }
  })
  return (
    <Stack gap="lg">
      <div>
        <Text size="sm" fw={500}>
          1. Register this redirect URI with {provider.name}
        </Text>
        <Group gap={4} wrap="nowrap">
          <Code style={{ wordBreak: 'break-all' }} data-testid="drawer-redirect-uri">
            {provider.redirectURI}
          </Code>
          <CopyURI value={provider.redirectURI} />
        </Group>
      </div>
      <form onSubmit={submit}>
        <Editable op="providers.update" note>
          <Stack gap="sm">
            <Text size="sm" fw={500}>
              2. Paste the client id and secret it gives you
            </Text>
            <TextInput label="Client id" {...form.getInputProps('clientId')} data-testid={`provider-${provider.id}-client-id`} />
            <PasswordInput
              label="Client secret"
              description={provider.hasClientSecret ? 'Stored (encrypted). Leave empty to keep it.' : 'Not set yet.'}
              placeholder={provider.hasClientSecret ? '••••••••' : ''}
              {...form.getInputProps('clientSecret')}
              data-testid={`provider-${provider.id}-secret`}
            />
            <Switch
              label="Users can sign in with it"
              description="Turn on once the test sign-in works."
              {...form.getInputProps('enabled', { type: 'checkbox' })}
              data-testid={`provider-${provider.id}-enabled`}
            />
            <TagsInput label="Extra scopes" description="Asked for on top of the provider's defaults." {...form.getInputProps('scopes')} />
            <Switch
              label="Trust its email addresses for linking"
              description="Sign-in joins the account with the same email even if the provider does not say it is verified."
              {...form.getInputProps('trustedForLinking', { type: 'checkbox' })}
            />
            <details>
              <summary>
                <Text span size="sm">
                  Endpoint overrides (self-hosted or test servers)
                </Text>
              </summary>
              <Stack gap="xs" mt="xs">
                {provider.overridableEndpoints.map((name) => (
                  <TextInput key={name} size="xs" label={name} placeholder="default" {...form.getInputProps(`overrides.${name}`)} />
                ))}
              </Stack>
            </details>
            <Group justify="flex-end">
              <Button
                type="submit"
                leftSection={<IconDeviceFloppy size={16} />}
                loading={save.isPending}
                data-testid={`provider-${provider.id}-save`}
              >
                Save {provider.name}
              </Button>
            </Group>
          </Stack>
        </Editable>
      </form>
      <div>
        <Text size="sm" fw={500} mb={4}>
          3. Try it
        </Text>
        <TestSignIn provider={provider} />
      </div>
    </Stack>
  )
}

export default function Providers() {
  const list = useOp('providers.list', {}, { refetchOnWindowFocus: false })
  const [selected, setSelected] = useState<string | null>(null)
  const enabled = list.data?.filter((p) => p.enabled).length ?? 0
  const current = list.data?.find((p) => p.id === selected) ?? null
  return (
    <Stack>
      <PageHeader
        title="Providers"
        description={`Sign-in with another service's account. Pick one, register its redirect URI there, then paste the client id and secret. ${list.data ? `${enabled} of ${list.data.length} enabled.` : ''}`}
      />
      <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
      {!list.data ? (
        !list.error && <Loading />
      ) : (
        <Card withBorder padding={0}>
          <Table verticalSpacing="xs" highlightOnHover data-testid="providers-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Provider</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Redirect URI</Table.Th>
                <Table.Th>
                  <span style={{ position: 'absolute', width: 1, height: 1, overflow: 'hidden', clip: 'rect(0 0 0 0)' }}>Actions</span>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.data.map((p) => (
                <Table.Tr key={p.id} data-testid={`provider-${p.id}`}>
                  <Table.Td>
                    <Group gap="sm" wrap="nowrap">
                      <Logo id={p.id} />
                      <Text size="sm" fw={500}>
                        {p.name}
                      </Text>
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="outline" color={STATUS[p.status].color} data-testid={`provider-${p.id}-status`}>
                      {STATUS[p.status].label}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <Text size="xs" ff="monospace" style={{ wordBreak: 'break-all' }}>
                        {p.redirectURI}
                      </Text>
                      <CopyURI value={p.redirectURI} />
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Button
                      size="xs"
                      variant="default"
                      leftSection={<IconSettings size={14} />}
                      onClick={() => setSelected(p.id)}
                      aria-label={`Configure ${p.name}`}
                      data-testid={`provider-${p.id}-configure`}
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
      <ProviderDrawer provider={current} onClose={() => setSelected(null)} />
      <GenericProviders />
    </Stack>
  )
}
