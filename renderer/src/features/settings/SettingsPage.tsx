import {
  ActionIcon,
  Alert,
  Anchor,
  Badge,
  Button,
  Card,
  Code,
  Group,
  JsonInput,
  List,
  Modal,
  NavLink,
  NumberInput,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  TagsInput,
  Text,
  TextInput,
  Title,
  Tooltip,
} from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { IconAlertTriangle, IconDeviceFloppy, IconInfoCircle, IconLockOpen, IconPlus, IconRestore, IconTrash } from '@tabler/icons-react'
import { type ReactNode, useContext, useEffect, useMemo, useState } from 'react'
import { trustedOriginEntry } from '../../../../server/config/schema'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { Allowed, ReadOnlyNote, useMay } from '../../access'
import { ErrorNotice, Loading, PageHeader } from '../../components/common'
import { dateTime, duration } from '../../format'
import { useUnsaved } from '../../unsaved'
import { PanelFeatures } from '../panel-feature'
import {
  describeValue,
  type FieldSpec,
  getPath,
  humanIssue,
  type SectionSpec,
  sectionPatch,
  sectionsOf,
  uncoveredFields,
} from './settings-fields'
import { ink } from '../../ink'

type Json = Record<string, unknown>
type Values = Record<string, unknown>
type Issue = { path: string; message: string }
/** The select option of a key left unset (FieldSpec.unsetLabel). */
const UNSET = '__unset__'

/** The rule the config schema applies to each entry (empty, malformed, paths...). */
export function originProblem(value: string): string | null {
  const parsed = trustedOriginEntry.safeParse(value)
  return parsed.success ? null : (parsed.error.issues[0]?.message ?? 'invalid origin')
}

/** The section named in the hash (#/settings?section=sessions). */
function sectionFromHash(): string {
  const query = window.location.hash.split('?')[1] ?? ''
  return new URLSearchParams(query).get('section') ?? ''
}

/** Why a text is not JSON (the parser's own reason), or null when it parses. */
export function jsonProblem(text: string): string | null {
  try {
    JSON.parse(text || '{}')
    return null
  } catch (e) {
    return `Not valid JSON: ${(e as Error).message}`
  }
}

/**
 * A JSON value edited as text. The text is the editor's own while mounted (no reformatting while
 * typing); text that does not parse is reported up (`onRawText`), so the section counts it as an
 * unsaved change that Discard throws away, and its reason shows under the field.
 */
function JsonField({ spec, value, onChange, error, disabled, rawText, onRawText }: FieldProps) {
  const [text, setText] = useState(() => rawText ?? JSON.stringify(value ?? {}, null, 2))
  const problem = rawText === undefined ? null : jsonProblem(rawText)
  return (
    <JsonInput
      label={spec.label}
      description={spec.help}
      value={text}
      disabled={disabled}
      autosize
      minRows={2}
      formatOnBlur
      validationError={problem ?? 'Not valid JSON'}
      error={problem ?? error}
      data-testid={`setting-${spec.path}`}
      onChange={(next) => {
        setText(next)
        if (jsonProblem(next)) return onRawText?.(next)
        onRawText?.(undefined)
        const parsed = JSON.parse(next || '{}') as unknown
        if (JSON.stringify(parsed) !== JSON.stringify(value)) onChange(parsed)
      }}
    />
  )
}

function TrustedOrigins({ value, onChange, error, disabled }: FieldProps) {
  const origins = Array.isArray(value) ? (value as string[]) : []
  const [draft, setDraft] = useState('')
  const [draftError, setDraftError] = useState<string | null>(null)
  const add = () => {
    const problem = originProblem(draft)
    if (problem) return setDraftError(problem)
    if (origins.includes(draft)) return setDraftError('already in the list')
    onChange([...origins, draft])
    setDraft('')
    setDraftError(null)
  }
  return (
    <Stack gap="xs" data-testid="trusted-origins">
      <div>
        <Text size="sm" fw={500}>
          Trusted origins
        </Text>
        <Text size="xs" c="dimmed" className="help">
          Web apps allowed to sign users in and receive redirects: exact origins (https://app.example.com), wildcards (*.example.com) or app
          schemes (myapp://). The API&rsquo;s own origin is always trusted.
        </Text>
      </div>
      {origins.length === 0 && (
        <Text size="sm" data-testid="no-origins">
          No app is trusted yet: only the API&rsquo;s own origin. Add the origin of each app that signs users in.
        </Text>
      )}
      {error && (
        <Text size="xs" c={ink.danger}>
          {error}
        </Text>
      )}
      {origins.map((origin, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place; a value key would drop focus on each keystroke
        <Group key={i} gap="xs" wrap="nowrap">
          <TextInput
            style={{ flex: 1 }}
            value={origin}
            disabled={disabled}
            aria-label={`Trusted origin ${i + 1}`}
            error={originProblem(origin)}
            onChange={(e) => {
              const next = [...origins]
              next[i] = e.currentTarget.value
              onChange(next)
            }}
          />
          <ActionIcon
            variant="subtle"
            color="red"
            disabled={disabled}
            aria-label={`Remove ${origin}`}
            onClick={() => onChange(origins.filter((_, j) => j !== i))}
          >
            <IconTrash size={16} />
          </ActionIcon>
        </Group>
      ))}
      <Group gap="xs" align="flex-start" wrap="nowrap">
        <TextInput
          style={{ flex: 1 }}
          placeholder="Add an origin, e.g. https://app.example.com"
          aria-label="New trusted origin"
          value={draft}
          error={draftError}
          disabled={disabled}
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
        <Button variant="light" leftSection={<IconPlus size={16} />} onClick={add} disabled={disabled} data-testid="add-origin">
          Add
        </Button>
      </Group>
    </Stack>
  )
}

interface FieldProps {
  spec: FieldSpec
  value: unknown
  onChange: (v: unknown) => void
  error?: string
  disabled: boolean
  /** json: the text typed that does not parse (kept by the page), and where to report it. */
  rawText?: string
  onRawText?: (text: string | undefined) => void
}

function Field(props: FieldProps & { overridden: boolean }) {
  const { spec, value, onChange, error, overridden } = props
  const label: ReactNode = (
    <Group gap={6} component="span">
      {spec.label}
      {overridden && (
        <Tooltip label="Set by a start-up option (--config, a flag or the environment), which wins over the panel" withArrow>
          <Badge size="xs" color={ink.special} variant="outline">
            set at start-up
          </Badge>
        </Tooltip>
      )}
    </Group>
  )
  const seconds = (v: unknown) => (typeof v === 'number' && v > 0 ? ` (${duration(v)})` : '')
  // Read-only: set at start-up, or the signed-in admin's role may not change settings.
  const locked = overridden || Boolean(props.disabled)
  const common = { label, description: spec.help, disabled: locked, error, 'data-testid': `setting-${spec.path}` }
  switch (spec.kind) {
    case 'origins':
      return <TrustedOrigins {...props} disabled={locked} />
    case 'json':
      return <JsonField {...props} disabled={locked} />
    case 'switch':
      return <Switch {...common} checked={Boolean(value)} onChange={(e) => onChange(e.currentTarget.checked)} />
    case 'inverted':
      return <Switch {...common} checked={!value} onChange={(e) => onChange(!e.currentTarget.checked)} />
    case 'number':
    case 'seconds':
    case 'optional-number':
    case 'optional-seconds': {
      const optional = spec.kind.startsWith('optional')
      const isSeconds = spec.kind.endsWith('seconds')
      return (
        <NumberInput
          {...common}
          description={`${spec.help}${isSeconds ? seconds(value) : ''}`}
          value={typeof value === 'number' ? value : ''}
          min={spec.min ?? 0}
          allowDecimal={false}
          placeholder={optional ? 'not set' : undefined}
          suffix={isSeconds ? ' s' : undefined}
          onChange={(v) => onChange(v === '' ? (optional ? undefined : v) : Number(v))}
        />
      )
    }
    case 'text':
    case 'optional-text':
      return (
        <TextInput
          {...common}
          value={String(value ?? '')}
          placeholder={spec.kind === 'optional-text' ? 'not set' : undefined}
          onChange={(e) => onChange(spec.kind === 'optional-text' && e.currentTarget.value === '' ? undefined : e.currentTarget.value)}
        />
      )
    case 'tags':
      return <TagsInput {...common} value={Array.isArray(value) ? (value as string[]) : []} clearable onChange={onChange} />
    case 'select':
      return (
        <Select
          {...common}
          data={spec.unsetLabel ? [{ value: UNSET, label: spec.unsetLabel }, ...(spec.options ?? [])] : (spec.options ?? [])}
          value={value === undefined && spec.unsetLabel ? UNSET : String(value ?? '')}
          allowDeselect={false}
          onChange={(v) => v && onChange(v === UNSET ? undefined : v)}
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
          onChange={(v) => onChange(v === 'on' ? true : v === 'off' ? false : undefined)}
        />
      )
  }
}

/** One section: its own values, checked while typing, its own save, and a review of what will change before saving. */
function SectionForm({
  section,
  allFields,
  effective,
  overridden,
  extra,
  draft,
  onDraft,
  rawJson,
  onRawJson,
}: {
  section: SectionSpec
  /** Every field of every section: issues that name another key say its label. */
  allFields: FieldSpec[]
  effective: Json
  overridden: string[]
  extra?: ReactNode
  /** Unsaved values kept by the page, so moving to another section loses nothing. */
  draft: Values | undefined
  onDraft: (values: Values | undefined) => void
  /** JSON fields whose text does not parse: path → that text (kept by the page too). */
  rawJson: Record<string, string>
  onRawJson: (path: string, text: string | undefined) => void
}) {
  const initial = useMemo(() => Object.fromEntries(section.fields.map((f) => [f.path, getPath(effective, f.path)])), [section, effective])
  const values = draft ?? initial
  const setValues = (update: (prev: Values) => Values) => onDraft(update(values))
  const [saveIssues, setSaveIssues] = useState<Issue[]>([])
  const [reviewing, setReviewing] = useState(false)
  // Remounts the fields on Discard, so editors holding their own text (JSON) start again from the saved value.
  const [generation, setGeneration] = useState(0)
  const save = useOpMutation('settings.update')
  const mayEdit = useMay('settings.update')
  const patch = sectionPatch(section.fields, effective, values)
  const invalidJson = section.fields.filter((f) => rawJson[f.path] !== undefined)
  const changes = section.fields.filter((f) => JSON.stringify(getPath(effective, f.path)) !== JSON.stringify(values[f.path]))
  const isOverridden = (path: string) => overridden.some((p) => p === path || p.startsWith(`${path}.`))

  // Checked with the server's own schema while typing (debounced), before any save.
  const [checking] = useDebouncedValue(patch, 250)
  const validation = useOp(
    'settings.validate',
    { patch: checking ?? {} },
    { enabled: Boolean(checking), retry: false, refetchOnWindowFocus: false },
  )
  const current = patch && JSON.stringify(checking) === JSON.stringify(patch) ? validation.data : undefined
  const issues = patch ? [...(current?.issues ?? []), ...saveIssues] : []

  const labelOf = (path: string) => {
    const f = allFields.find((x) => x.path === path)
    return f && { label: f.label, value: path in values ? values[path] : getPath(effective, path) }
  }
  const fieldOf = (path: string) => section.fields.find((f) => path === f.path || path.startsWith(`${f.path}.`))
  const errors: Record<string, string> = {}
  const elsewhere: string[] = []
  for (const issue of issues) {
    const f = fieldOf(issue.path)
    if (!f) {
      const other = allFields.find((x) => issue.path === x.path || issue.path.startsWith(`${x.path}.`))
      elsewhere.push(other ? `${other.label}: ${humanIssue(issue, other, labelOf)}` : `${issue.path}: ${issue.message}`)
    } else if (!errors[f.path]) errors[f.path] = humanIssue(issue, f, labelOf)
  }
  const problems = Object.keys(errors).length + elsewhere.length + invalidJson.length

  const submit = async () => {
    if (!patch) return
    try {
      await save.mutateAsync({ patch })
      onDraft(undefined)
      setSaveIssues([])
      notifications.show({ color: 'teal', title: `${section.title} saved`, message: 'In effect from the next request; no restart needed.' })
    } catch (e) {
      const error = e as PanelCallError
      setSaveIssues(error.issues)
      const first = error.issues[0]
      const f = first && (fieldOf(first.path) ?? allFields.find((x) => first.path === x.path || first.path.startsWith(`${x.path}.`)))
      notifications.show({
        color: 'red',
        title: 'Not saved',
        message: first && f ? `${f.label}: ${humanIssue(first, f, labelOf)}` : error.message,
      })
    } finally {
      setReviewing(false)
    }
  }

  return (
    <Card withBorder padding="lg" data-testid={`section-${section.id}`}>
      <Title order={3} size="h4">
        {section.title}
      </Title>
      <Text size="sm" c="dimmed" mb="md">
        {section.description}
      </Text>
      <Stack gap="lg" key={generation}>
        {extra}
        {section.fields.map((f) => (
          <Field
            key={f.path}
            spec={f}
            value={values[f.path]}
            error={errors[f.path]}
            overridden={isOverridden(f.path)}
            disabled={!mayEdit}
            rawText={rawJson[f.path]}
            onRawText={(text) => onRawJson(f.path, text)}
            onChange={(v) => {
              setSaveIssues([])
              setValues((prev) => ({ ...prev, [f.path]: v }))
            }}
          />
        ))}
        {elsewhere.length > 0 && (
          <Alert
            color="red"
            variant="light"
            icon={<IconAlertTriangle />}
            title="This change conflicts with another setting"
            data-testid="section-issues"
          >
            <List size="sm">
              {elsewhere.map((m) => (
                <List.Item key={m}>{m}</List.Item>
              ))}
            </List>
          </Alert>
        )}
      </Stack>
      <Group justify="flex-end" mt="lg" pos="sticky" bottom={0} py="sm" bg="var(--mantine-color-body)" style={{ zIndex: 2 }}>
        {problems > 0 && (
          <Text size="sm" c={ink.danger} data-testid="section-problems" role="status">
            {problems} field{problems === 1 ? ' needs' : 's need'} fixing before saving
          </Text>
        )}
        {(patch || invalidJson.length > 0) && (
          <Badge color={ink.accent} variant="outline" data-testid="unsaved">
            {changes.length + invalidJson.length} unsaved change{changes.length + invalidJson.length === 1 ? '' : 's'}
          </Badge>
        )}
        <Button
          variant="default"
          leftSection={<IconRestore size={16} />}
          disabled={!patch && invalidJson.length === 0}
          data-testid="discard-settings"
          onClick={() => {
            onDraft(undefined)
            for (const f of invalidJson) onRawJson(f.path, undefined)
            setSaveIssues([])
            setGeneration((g) => g + 1)
          }}
        >
          Discard
        </Button>
        {/* Shown refused to a view-only admin: the one control here a keyboard reaches to hear why. */}
        <Allowed op="settings.update">
          <Button
            leftSection={<IconDeviceFloppy size={16} />}
            disabled={!patch || problems > 0}
            onClick={() => setReviewing(true)}
            data-testid="save-settings"
          >
            Review and save
          </Button>
        </Allowed>
      </Group>
      <Modal opened={reviewing} onClose={() => setReviewing(false)} title={`Save ${section.title.toLowerCase()}?`} centered size="lg">
        <Stack>
          <Text size="sm">These settings will change, for every request from now on:</Text>
          <List spacing="xs" size="sm" data-testid="review-changes">
            {changes.map((f) => (
              <List.Item key={f.path}>
                <Text span fw={600} size="sm">
                  {f.label}
                </Text>
                {': '}
                <Text span size="sm" td="line-through" c="dimmed">
                  {describeValue(f, getPath(effective, f.path))}
                </Text>
                {' → '}
                <Text span size="sm">
                  {describeValue(f, values[f.path])}
                </Text>
              </List.Item>
            ))}
          </List>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setReviewing(false)}>
              Keep editing
            </Button>
            <Button loading={save.isPending} onClick={submit} data-testid="confirm-save">
              Save {changes.length} change{changes.length === 1 ? '' : 's'}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Card>
  )
}

/** Accounts locked by the password throttle, with a way to lift each lock. */
function LockedAccounts() {
  const locks = useOp('security.locks', {})
  const unlock = useOpMutation('security.unlock')
  const rows = locks.data?.locks ?? []
  return (
    <Card withBorder padding="md" data-testid="locked-accounts">
      <Title order={4}>Locked accounts</Title>
      <Text size="sm" c="dimmed" mb="sm">
        Sign-in names with too many failed passwords. Each unlocks by itself at the time shown.
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
              <Table.Th>
                <span className="visually-hidden">Action</span>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((lock) => (
              <Table.Tr key={lock.key}>
                <Table.Td>
                  <code>{lock.key}</code>
                </Table.Td>
                <Table.Td>{lock.failures}</Table.Td>
                <Table.Td>{dateTime(lock.lockedUntil)}</Table.Td>
                <Table.Td>
                  <Allowed op="security.unlock">
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
                  </Allowed>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Card>
  )
}

function ReadAtStartUp({ basePath }: { basePath: string }) {
  const info = useOp('server.info', {})
  return (
    <Alert color="blue" variant="light" icon={<IconInfoCircle />} title="Set when the server starts" data-testid="base-url">
      <Stack gap={4}>
        <Text size="sm">
          Base URL: <Code>{info.data?.apiURL ?? '…'}</Code>. Apps and the links in emails use it. For other machines on the LAN start with{' '}
          <Code>--host 0.0.0.0 --base-url http://NAME:PORT</Code> (or behind a proxy, its https URL).
        </Text>
        <Text size="sm">
          Base path: <Code>{basePath}</Code>. Change it with <Code>--config</Code> and a restart.
        </Text>
      </Stack>
    </Alert>
  )
}

export default function Settings() {
  const settings = useOp('settings.get', {}, { refetchOnWindowFocus: false })
  const [current, setCurrent] = useState(sectionFromHash)
  const mayEdit = useMay('settings.update')
  const [drafts, setDrafts] = useState<Record<string, Values>>({})
  const [rawJson, setRawJson] = useState<Record<string, string>>({})
  useEffect(() => {
    const update = () => setCurrent(sectionFromHash())
    window.addEventListener('hashchange', update)
    return () => window.removeEventListener('hashchange', update)
  }, [])
  const effective = settings.data?.effective
  const features = useContext(PanelFeatures)
  const declared = useMemo(() => sectionsOf(features), [features])
  const more = useMemo(() => (effective ? uncoveredFields(effective, features) : []), [effective, features])
  const sections: SectionSpec[] = more.length
    ? [...declared, { id: 'more', title: 'More', description: 'Keys of features this view has no form for yet.', fields: more }]
    : declared
  const section = sections.find((s) => s.id === current) ?? sections[0]!
  const allFields = useMemo(() => sections.flatMap((s) => s.fields), [sections])
  const unsaved = (s: SectionSpec) =>
    s.fields.some((f) => rawJson[f.path] !== undefined) ||
    Boolean(effective && drafts[s.id] && sectionPatch(s.fields, effective, drafts[s.id] as Values))
  useUnsaved('settings', sections.some(unsaved))

  return (
    <Stack>
      <PageHeader
        title="Settings"
        description="Every setting of the server, by subject. Each section is checked with the server's own rules and saved on its own; no restart needed."
      />
      {!mayEdit && <ReadOnlyNote />}
      <ErrorNotice error={settings.error} onRetry={() => void settings.refetch()} />
      {!settings.data ? (
        !settings.error && <Loading />
      ) : (
        <SimpleGrid cols={{ base: 1, md: 4 }} spacing="lg">
          <nav aria-label="Settings sections">
            <Stack gap={2}>
              {sections.map((s) => (
                <NavLink
                  key={s.id}
                  href={`#/settings?section=${s.id}`}
                  label={s.title}
                  rightSection={
                    unsaved(s) ? (
                      <Badge size="xs" color={ink.accent} variant="outline">
                        unsaved
                      </Badge>
                    ) : undefined
                  }
                  active={s.id === section.id}
                  aria-current={s.id === section.id ? 'page' : undefined}
                  data-testid={`settings-nav-${s.id}`}
                />
              ))}
            </Stack>
            <Text size="xs" c="dimmed" mt="md" px="sm">
              Social sign-in is set in <Anchor href="#/providers">Providers</Anchor>; the SMTP server in{' '}
              <Anchor href="#/email">Email</Anchor>.
            </Text>
          </nav>
          <div style={{ gridColumn: 'span 3' }}>
            <SectionForm
              key={`${section.id}:${JSON.stringify(settings.data.effective)}`}
              section={section}
              allFields={allFields}
              rawJson={rawJson}
              onRawJson={(path, text) =>
                setRawJson((prev) => {
                  const next = { ...prev }
                  if (text === undefined) delete next[path]
                  else next[path] = text
                  return next
                })
              }
              effective={settings.data.effective}
              overridden={settings.data.overridden}
              draft={drafts[section.id]}
              onDraft={(values) =>
                setDrafts((prev) => {
                  const next = { ...prev }
                  if (values) next[section.id] = values
                  else delete next[section.id]
                  return next
                })
              }
              extra={
                section.id === 'application' ? (
                  <ReadAtStartUp basePath={String(settings.data.effective.basePath ?? '')} />
                ) : section.id === 'rate-limits' ? (
                  <LockedAccounts />
                ) : section.id === 'mail' ? (
                  <Text size="sm">
                    The SMTP server, a test email, the templates and the outbox are in <Anchor href="#/email">Email</Anchor>.
                  </Text>
                ) : undefined
              }
            />
          </div>
        </SimpleGrid>
      )}
    </Stack>
  )
}
