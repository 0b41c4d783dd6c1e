import { ActionIcon, Button, Group, JsonInput, NumberInput, Select, Stack, Switch, TagsInput, Text, TextInput } from '@mantine/core'
import { IconPlus, IconTrash } from '@tabler/icons-react'
import { type ReactNode, useId, useState } from 'react'
import { trustedOriginEntry } from '../../../../server/config/schema'
import { duration } from '../../format'
import { ink } from '../../ink'
import type { FieldSpec } from './settings-fields'
import { StartupLabel, startupDescription, startupReason, type StartupKey } from '../../startup'

/** The select option of a key left unset (FieldSpec.unsetLabel). */
const UNSET = '__unset__'

/** The rule the config schema applies to each entry (empty, malformed, paths...). */
export function originProblem(value: string): string | null {
  const parsed = trustedOriginEntry.safeParse(value)
  return parsed.success ? null : (parsed.error.issues[0]?.message ?? 'invalid origin')
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
function JsonField({
  spec,
  value,
  onChange,
  error,
  readOnly,
  description,
  rawText,
  onRawText,
}: FieldProps & { readOnly: boolean; description: ReactNode }) {
  const [text, setText] = useState(() => rawText ?? JSON.stringify(value ?? {}, null, 2))
  const problem = rawText === undefined ? null : jsonProblem(rawText)
  return (
    <JsonInput
      label={spec.label}
      description={description}
      value={text}
      readOnly={readOnly}
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

function TrustedOrigins({
  value,
  onChange,
  error,
  readOnly,
  label,
  reason,
}: FieldProps & { readOnly: boolean; label: ReactNode; reason?: string }) {
  const origins = Array.isArray(value) ? (value as string[]) : []
  const [draft, setDraft] = useState('')
  const [draftError, setDraftError] = useState<string | null>(null)
  const reasonId = useId()
  const labelId = useId()
  const add = () => {
    const problem = originProblem(draft)
    if (problem) return setDraftError(problem)
    if (origins.includes(draft)) return setDraftError('already in the list')
    onChange([...origins, draft])
    setDraft('')
    setDraftError(null)
  }
  return (
    // A group named by the label and, when read-only, described by the reason (Mantine keeps each row's own aria-describedby).
    <Stack gap="xs" data-testid="trusted-origins" role="group" aria-labelledby={labelId} aria-describedby={reason ? reasonId : undefined}>
      <div>
        <Text size="sm" fw={500} component="div" id={labelId}>
          {label}
        </Text>
        <Text size="xs" c="dimmed" className="help">
          Web apps allowed to sign users in and receive redirects: exact origins (https://app.example.com), wildcards (*.example.com) or app
          schemes (myapp://). The API&rsquo;s own origin is always trusted.
        </Text>
        {reason && (
          <Text size="xs" c="dimmed" id={reasonId} data-testid="trusted-origins-reason">
            {reason}
          </Text>
        )}
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
            readOnly={readOnly}
            aria-label={`Trusted origin ${i + 1}`}
            error={originProblem(origin)}
            onChange={(e) => {
              const next = [...origins]
              next[i] = e.currentTarget.value
              onChange(next)
            }}
          />
          {!readOnly && (
            <ActionIcon
              variant="subtle"
              color="red"
              aria-label={`Remove ${origin}`}
              onClick={() => onChange(origins.filter((_, j) => j !== i))}
            >
              <IconTrash size={16} />
            </ActionIcon>
          )}
        </Group>
      ))}
      {!readOnly && (
        <Group gap="xs" align="flex-start" wrap="nowrap">
          <TextInput
            style={{ flex: 1 }}
            placeholder="Add an origin, e.g. https://app.example.com"
            aria-label="New trusted origin"
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
      )}
    </Stack>
  )
}

export interface FieldProps {
  spec: FieldSpec
  value: unknown
  onChange: (v: unknown) => void
  error?: string
  /** Set at start-up (with its source): shown, never changed here. */
  startup?: StartupKey
  /** json: the text typed that does not parse (kept by the page), and where to report it. */
  rawText?: string
  onRawText?: (text: string | undefined) => void
}

/** One setting's editor; set at start-up, it is read-only (still focusable), with the badge and the reason under it. */
export function Field(props: FieldProps) {
  const { spec, value, onChange, error, startup } = props
  const readOnly = startup !== undefined
  const label: ReactNode = <StartupLabel label={spec.label} startup={startup} />
  const seconds = (v: unknown) => (typeof v === 'number' && v > 0 ? ` (${duration(v)})` : '')
  const help = (extra = ''): ReactNode => startupDescription(`${spec.help}${extra}`, startup)
  const common = { label, description: help(), readOnly, error, 'data-testid': `setting-${spec.path}` }
  /** A switch has no read-only state of its own: its change is ignored and it says so. */
  const lockedSwitch = readOnly ? { 'aria-readonly': true, readOnly: true } : {}
  switch (spec.kind) {
    case 'origins':
      return <TrustedOrigins {...props} readOnly={readOnly} label={label} reason={startup ? startupReason(startup.source) : undefined} />
    case 'json':
      return <JsonField {...props} readOnly={readOnly} description={help()} />
    case 'switch':
      return (
        <Switch {...common} {...lockedSwitch} checked={Boolean(value)} onChange={(e) => readOnly || onChange(e.currentTarget.checked)} />
      )
    case 'inverted':
      return <Switch {...common} {...lockedSwitch} checked={!value} onChange={(e) => readOnly || onChange(!e.currentTarget.checked)} />
    case 'number':
    case 'seconds':
    case 'optional-number':
    case 'optional-seconds': {
      const optional = spec.kind.startsWith('optional')
      const isSeconds = spec.kind.endsWith('seconds')
      return (
        <NumberInput
          {...common}
          description={help(isSeconds ? seconds(value) : '')}
          hideControls={readOnly}
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
