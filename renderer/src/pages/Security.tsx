import {
  ActionIcon,
  Alert,
  Badge,
  Button,
  Card,
  Group,
  JsonInput,
  NumberInput,
  Select,
  Stack,
  Switch,
  Table,
  TagsInput,
  Text,
  TextInput,
  Title,
  Tooltip,
} from '@mantine/core'
import { useForm } from '@mantine/form'
import { notifications } from '@mantine/notifications'
import { IconDeviceFloppy, IconInfoCircle, IconLockOpen, IconPlus, IconRestore, IconTrash } from '@tabler/icons-react'
import { useEffect, useMemo, useState } from 'react'
import { trustedOriginEntry } from '../../../server/config/schema'
import { type PanelCallError, useOp, useOpMutation } from '../api'
import { ErrorNotice, Loading, PageHeader } from '../components/common'
import { duration } from '../format'
import { diff, type FieldSpec, GROUP_TITLES, getPath, otherFields, SECTIONS } from '../settings-fields'

type Json = Record<string, unknown>

/** The rule the config schema applies to each entry (empty, malformed, paths...). */
export function originProblem(value: string): string | null {
  const parsed = trustedOriginEntry.safeParse(value)
  return parsed.success ? null : (parsed.error.issues[0]?.message ?? 'invalid origin')
}

function JsonField({
  value,
  onChange,
  error,
  label,
  description,
  disabled,
}: {
  value: unknown
  onChange: (v: unknown) => void
  error?: string
  label: string
  description?: string
  disabled?: boolean
}) {
  const [text, setText] = useState(() => JSON.stringify(value ?? {}, null, 2))
  const [parseError, setParseError] = useState<string | null>(null)
  useEffect(() => setText(JSON.stringify(value ?? {}, null, 2)), [value])
  return (
    <JsonInput
      label={label}
      description={description}
      value={text}
      disabled={disabled}
      autosize
      minRows={3}
      formatOnBlur
      error={parseError ?? error}
      onChange={setText}
      onBlur={() => {
        try {
          onChange(JSON.parse(text || '{}'))
          setParseError(null)
        } catch {
          setParseError('Not valid JSON')
        }
      }}
    />
  )
}

function Field({
  spec,
  form,
  overridden,
}: {
  spec: FieldSpec
  form: ReturnType<typeof useForm<Json>>
  overridden: boolean
}) {
  const value = getPath(form.getValues(), spec.path)
  const error = form.errors[spec.path] as string | undefined
  const label = (
    <Group gap={6} component="span">
      {spec.label}
      {overridden && (
        <Tooltip label="Set by a start-up option (--config, a flag or the environment), which wins over the panel" withArrow>
          <Badge size="xs" color="orange" variant="light">
            set at start-up
          </Badge>
        </Tooltip>
      )}
    </Group>
  )
  const common = { label, description: spec.description, disabled: overridden, 'data-testid': `setting-${spec.path}` }
  switch (spec.kind) {
    case 'switch':
      return <Switch {...common} checked={Boolean(value)} error={error} onChange={(e) => form.setFieldValue(spec.path, e.currentTarget.checked)} />
    case 'inverted':
      return <Switch {...common} checked={!value} error={error} onChange={(e) => form.setFieldValue(spec.path, !e.currentTarget.checked)} />
    case 'number':
    case 'seconds':
      return (
        <NumberInput
          {...common}
          description={
            spec.kind === 'seconds' && typeof value === 'number'
              ? `${spec.description ? `${spec.description} ` : ''}${value} s = ${duration(value)}`
              : spec.description
          }
          value={typeof value === 'number' ? value : ''}
          min={spec.min ?? 0}
          allowDecimal={false}
          suffix={spec.kind === 'seconds' ? ' s' : undefined}
          error={error}
          onChange={(v) => form.setFieldValue(spec.path, typeof v === 'number' ? v : Number(v))}
        />
      )
    case 'text':
      return <TextInput {...common} value={String(value ?? '')} error={error} onChange={(e) => form.setFieldValue(spec.path, e.currentTarget.value)} />
    case 'tags':
      return (
        <TagsInput
          {...common}
          value={Array.isArray(value) ? (value as string[]) : []}
          error={error}
          clearable
          onChange={(v) => form.setFieldValue(spec.path, v)}
        />
      )
    case 'select':
      return (
        <Select
          {...common}
          data={spec.options ?? []}
          value={String(value ?? '')}
          error={error}
          allowDeselect={false}
          onChange={(v) => v && form.setFieldValue(spec.path, v)}
        />
      )
    case 'tristate':
      return (
        <Select
          {...common}
          data={[
            { value: 'auto', label: 'Automatic (when the base URL is https)' },
            { value: 'on', label: 'Always' },
            { value: 'off', label: 'Never' },
          ]}
          value={value === true ? 'on' : value === false ? 'off' : 'auto'}
          allowDeselect={false}
          error={error}
          onChange={(v) => form.setFieldValue(spec.path, v === 'on' ? true : v === 'off' ? false : undefined)}
        />
      )
    default:
      return (
        <JsonField
          label={spec.label}
          description={spec.description}
          value={value}
          error={error}
          disabled={overridden}
          onChange={(v) => form.setFieldValue(spec.path, v)}
        />
      )
  }
}

function TrustedOrigins({ form, overridden }: { form: ReturnType<typeof useForm<Json>>; overridden: boolean }) {
  const origins = (form.getValues().trustedOrigins as string[] | undefined) ?? []
  const [draft, setDraft] = useState('')
  const [draftError, setDraftError] = useState<string | null>(null)
  const add = () => {
    const problem = originProblem(draft)
    if (problem) return setDraftError(problem)
    if (origins.includes(draft)) return setDraftError('already in the list')
    form.setFieldValue('trustedOrigins', [...origins, draft])
    setDraft('')
    setDraftError(null)
  }
  return (
    <Card withBorder padding="lg" data-testid="trusted-origins">
      <Title order={4}>Trusted origins</Title>
      <Text size="sm" c="dimmed" mb="md">
        Web apps allowed to send cookie-carrying requests, sign users in and receive redirects (callbackURL). The API&rsquo;s
        own origin is always trusted. Exact origins (https://app.example.com), wildcards (*.example.com) or app schemes
        (myapp://).
      </Text>
      {overridden && (
        <Alert color="orange" icon={<IconInfoCircle />} mb="md">
          This list is set by a start-up option (--trusted-origins or --config), which wins over what you save here.
        </Alert>
      )}
      <Stack gap="xs">
        {origins.length === 0 && (
          <Text size="sm" c="dimmed" data-testid="no-origins">
            No extra origins yet: only the API&rsquo;s own origin is trusted. Add the origin of each app that signs users in.
          </Text>
        )}
        {origins.map((origin, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place; a value key would drop focus on each keystroke
          <Group key={i} gap="xs" wrap="nowrap">
            <TextInput
              style={{ flex: 1 }}
              value={origin}
              aria-label={`Trusted origin ${i + 1}`}
              error={(form.errors[`trustedOrigins.${i}`] as string | undefined) ?? originProblem(origin)}
              onChange={(e) => {
                const next = [...origins]
                next[i] = e.currentTarget.value
                form.setFieldValue('trustedOrigins', next)
              }}
            />
            <ActionIcon
              variant="subtle"
              color="red"
              aria-label={`Remove ${origin}`}
              onClick={() => form.setFieldValue('trustedOrigins', origins.filter((_, j) => j !== i))}
            >
              <IconTrash size={16} />
            </ActionIcon>
          </Group>
        ))}
        <Group gap="xs" align="flex-start" wrap="nowrap">
          <TextInput
            style={{ flex: 1 }}
            placeholder="https://app.example.com"
            value={draft}
            error={draftError}
            data-testid="new-origin"
            onChange={(e) => {
              setDraft(e.currentTarget.value)
              setDraftError(null)
            }}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault()
                add()
              }
            }}
          />
          <Button variant="light" leftSection={<IconPlus size={16} />} onClick={add} data-testid="add-origin">
            Add
          </Button>
        </Group>
      </Stack>
    </Card>
  )
}

function SettingsForm({ effective, overridden, basePath }: { effective: Json; overridden: string[]; basePath: string }) {
  const form = useForm<Json>({ mode: 'controlled', initialValues: effective })
  const save = useOpMutation('settings.update')
  const others = useMemo(() => otherFields(effective), [effective])
  const isOverridden = (path: string) => overridden.some((p) => p === path || p.startsWith(`${path}.`))
  const patch = diff(effective, form.getValues()) as Json | undefined

  const submit = async () => {
    if (!patch) return
    form.clearErrors()
    try {
      const result = await save.mutateAsync({ patch })
      form.setInitialValues(result.effective)
      form.setValues(result.effective)
      notifications.show({ color: 'teal', title: 'Settings saved', message: 'They apply to the next request; no restart needed.' })
    } catch (e) {
      const error = e as PanelCallError
      for (const issue of error.issues) form.setFieldError(issue.path, issue.message)
      notifications.show({ color: 'red', title: 'Not saved', message: error.message })
    }
  }

  return (
    <Stack>
      <Group justify="flex-end" pos="sticky" top={64} style={{ zIndex: 5 }}>
        {patch && (
          <Badge color="yellow" variant="light" data-testid="unsaved">
            Unsaved changes
          </Badge>
        )}
        <Button
          variant="default"
          leftSection={<IconRestore size={16} />}
          disabled={!patch}
          onClick={() => {
            form.setValues(effective)
            form.clearErrors()
          }}
        >
          Discard
        </Button>
        <Button leftSection={<IconDeviceFloppy size={16} />} disabled={!patch} loading={save.isPending} onClick={submit} data-testid="save-settings">
          Save settings
        </Button>
      </Group>
      <TrustedOrigins form={form} overridden={isOverridden('trustedOrigins')} />
      {SECTIONS.map((section) => (
        <Card withBorder padding="lg" key={section.id} data-testid={`section-${section.id}`}>
          <Title order={4}>{section.title}</Title>
          <Text size="sm" c="dimmed" mb="md">
            {section.description}
          </Text>
          <Stack gap="md">
            {section.fields
              .filter((f) => getPath(effective, f.path) !== undefined || f.kind === 'tristate')
              .map((f) => (
                <Field key={f.path} spec={f} form={form} overridden={isOverridden(f.path)} />
              ))}
          </Stack>
        </Card>
      ))}
      {[...new Set(others.map((f) => f.path.split('.')[0] ?? ''))].map((group) => (
        <Card withBorder padding="lg" key={group} data-testid={`section-${group}`}>
          <Title order={4}>{GROUP_TITLES[group]?.title ?? group}</Title>
          <Text size="sm" c="dimmed" mb="md">
            {GROUP_TITLES[group]?.description ?? 'More settings.'}
          </Text>
          <Stack gap="md">
            {others
              .filter((f) => f.path.split('.')[0] === group)
              .map((f) => (
                <Field key={f.path} spec={f} form={form} overridden={isOverridden(f.path)} />
              ))}
          </Stack>
        </Card>
      ))}
      <Card withBorder padding="lg">
        <Title order={4}>Read at start-up</Title>
        <Text size="sm" c="dimmed">
          Base path: <code>{basePath}</code>. Routes are mounted once when the server starts; change it with --config and restart.
        </Text>
      </Card>
    </Stack>
  )
}

/** Accounts locked by the password throttle, with a way to lift each lock. */
function LockedAccounts() {
  const locks = useOp('security.locks', {})
  const unlock = useOpMutation('security.unlock')
  const rows = locks.data?.locks ?? []
  return (
    <Card withBorder padding="lg" data-testid="locked-accounts">
      <Title order={4}>Locked accounts</Title>
      <Text size="sm" c="dimmed" mb="md">
        Identifiers with too many failed password checks. They unlock by themselves when the time shown has passed.
      </Text>
      <ErrorNotice error={locks.error ?? unlock.error} onRetry={() => void locks.refetch()} />
      {rows.length === 0 ? (
        <Text size="sm">No account is locked.</Text>
      ) : (
        <Table fz="sm" striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Identifier</Table.Th>
              <Table.Th>Failures</Table.Th>
              <Table.Th>Locked until</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((lock) => (
              <Table.Tr key={lock.key}>
                <Table.Td>
                  <code>{lock.key}</code>
                </Table.Td>
                <Table.Td>{lock.failures}</Table.Td>
                <Table.Td>{new Date(lock.lockedUntil).toLocaleString()}</Table.Td>
                <Table.Td>
                  <Button
                    size="xs"
                    variant="light"
                    leftSection={<IconLockOpen size={14} />}
                    loading={unlock.isPending && unlock.variables?.key === lock.key}
                    onClick={() =>
                      unlock.mutate(
                        { key: lock.key },
                        { onSuccess: () => notifications.show({ message: `${lock.key} unlocked`, color: 'green' }) },
                      )
                    }
                  >
                    Unlock
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Card>
  )
}

export default function Security() {
  const settings = useOp('settings.get', {}, { refetchOnWindowFocus: false })
  return (
    <Stack>
      <PageHeader
        title="Security"
        description="Every setting of the server. Saved settings are validated with the server's own rules and take effect at once."
      />
      <ErrorNotice error={settings.error} onRetry={() => void settings.refetch()} />
      <LockedAccounts />
      {settings.data ? (
        <SettingsForm
          key={JSON.stringify(settings.data.effective)}
          effective={settings.data.effective}
          overridden={settings.data.overridden}
          basePath={String(settings.data.effective.basePath ?? '')}
        />
      ) : (
        !settings.error && <Loading />
      )}
    </Stack>
  )
}
