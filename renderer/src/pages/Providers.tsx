import {
  ActionIcon,
  Badge,
  Button,
  Card,
  Code,
  CopyButton,
  Group,
  PasswordInput,
  SimpleGrid,
  Stack,
  Switch,
  TagsInput,
  Text,
  TextInput,
  Title,
  Tooltip,
} from '@mantine/core'
import { useForm } from '@mantine/form'
import { notifications } from '@mantine/notifications'
import { IconCheck, IconCopy, IconDeviceFloppy } from '@tabler/icons-react'
import type { ProviderView } from '../../../server/panel/contract'
import { type PanelCallError, useOp, useOpMutation } from '../api'
import { ErrorNotice, Loading, PageHeader } from '../components/common'

function ProviderCard({ provider }: { provider: ProviderView }) {
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
  const submit = form.onSubmit(async (values) => {
    try {
      await save.mutateAsync({ id: provider.id, ...values, clientSecret: values.clientSecret || undefined })
      form.setFieldValue('clientSecret', '')
      form.resetDirty()
      notifications.show({ color: 'teal', title: `${provider.name} saved`, message: 'Sign-in uses the new settings at once.' })
    } catch (e) {
      const error = e as PanelCallError
      for (const issue of error.issues) form.setFieldError(issue.path, issue.message)
      notifications.show({ color: 'red', title: `${provider.name} not saved`, message: error.message })
    }
  })
  return (
    <Card withBorder padding="lg" data-testid={`provider-${provider.id}`}>
      <form onSubmit={submit}>
        <Stack gap="sm">
          <Group justify="space-between">
            <Group gap="xs">
              <Title order={4}>{provider.name}</Title>
              {provider.enabled ? (
                <Badge color="teal" variant="light">
                  enabled
                </Badge>
              ) : (
                <Badge color="gray" variant="light">
                  off
                </Badge>
              )}
            </Group>
            <Switch label="Enabled" {...form.getInputProps('enabled', { type: 'checkbox' })} data-testid={`provider-${provider.id}-enabled`} />
          </Group>
          <div>
            <Text size="xs" c="dimmed">
              Redirect URI to register with {provider.name}
            </Text>
            <Group gap={4} wrap="nowrap">
              <Code style={{ wordBreak: 'break-all' }}>{provider.redirectURI}</Code>
              <CopyButton value={provider.redirectURI}>
                {({ copied, copy }) => (
                  <Tooltip label={copied ? 'Copied' : 'Copy'} withArrow>
                    <ActionIcon variant="subtle" size="sm" onClick={copy} aria-label="Copy redirect URI">
                      {copied ? <IconCheck size={14} /> : <IconCopy size={14} />}
                    </ActionIcon>
                  </Tooltip>
                )}
              </CopyButton>
            </Group>
          </div>
          <TextInput label="Client id" {...form.getInputProps('clientId')} data-testid={`provider-${provider.id}-client-id`} />
          <PasswordInput
            label="Client secret"
            description={provider.hasClientSecret ? 'Stored (encrypted). Leave empty to keep it.' : 'Not set'}
            placeholder={provider.hasClientSecret ? '••••••••' : ''}
            {...form.getInputProps('clientSecret')}
            data-testid={`provider-${provider.id}-secret`}
          />
          <TagsInput label="Extra scopes" description="Added to the provider's defaults" {...form.getInputProps('scopes')} />
          <Switch label="Trusted for account linking" {...form.getInputProps('trustedForLinking', { type: 'checkbox' })} />
          <details>
            <summary>
              <Text span size="sm">
                Endpoint overrides
              </Text>
            </summary>
            <Stack gap="xs" mt="xs">
              {provider.overridableEndpoints.map((name) => (
                <TextInput key={name} size="xs" label={name} placeholder="default" {...form.getInputProps(`overrides.${name}`)} />
              ))}
            </Stack>
          </details>
          <Group justify="flex-end">
            <Button type="submit" size="xs" leftSection={<IconDeviceFloppy size={14} />} loading={save.isPending} data-testid={`provider-${provider.id}-save`}>
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  )
}

export default function Providers() {
  const list = useOp('providers.list', {}, { refetchOnWindowFocus: false })
  const enabled = list.data?.filter((p) => p.enabled).length ?? 0
  return (
    <Stack>
      <PageHeader
        title="Providers"
        description={`Social sign-in. Register the redirect URI with each provider, then paste its client id and secret. ${list.data ? `${enabled} of ${list.data.length} enabled.` : ''}`}
      />
      <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
      {!list.data ? (
        !list.error && <Loading />
      ) : (
        <SimpleGrid cols={{ base: 1, md: 2, xl: 3 }}>
          {list.data.map((p) => (
            <ProviderCard key={p.id} provider={p} />
          ))}
        </SimpleGrid>
      )}
    </Stack>
  )
}
