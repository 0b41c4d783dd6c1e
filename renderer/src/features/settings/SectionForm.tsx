import { Alert, Badge, Button, Card, Group, List, Modal, Stack, Text, Title } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { IconAlertTriangle, IconDeviceFloppy, IconRestore } from '@tabler/icons-react'
import { type ReactNode, useMemo, useState } from 'react'
import { Allowed, Editable } from '../../access'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { ink } from '../../ink'
import { NameImpactList } from '../groups/NameImpact'
import { Field } from './SettingField'
import { startupKeyFor, type StartupKey } from '../../startup'
import { describeValue, type FieldSpec, getPath, humanIssue, type SectionSpec, sectionPatch } from './settings-fields'

type Json = Record<string, unknown>
type Values = Record<string, unknown>
type Issue = { path: string; message: string }

/**
 * The issues of a section's change, checked with the server's own schema while typing (debounced),
 * each beside its field, or listed when it names a key of another section.
 */
function useSectionIssues(section: SectionSpec, allFields: FieldSpec[], effective: Json, values: Values, patch: Json | undefined) {
  const [saveIssues, setSaveIssues] = useState<Issue[]>([])
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
  const under = (f: FieldSpec, path: string) => path === f.path || path.startsWith(`${f.path}.`)
  const fieldOf = (path: string) => section.fields.find((f) => under(f, path)) ?? allFields.find((f) => under(f, path))
  const errors: Record<string, string> = {}
  const elsewhere: string[] = []
  for (const issue of issues) {
    const f = section.fields.find((x) => under(x, issue.path))
    if (!f) {
      const other = allFields.find((x) => under(x, issue.path))
      elsewhere.push(other ? `${other.label}: ${humanIssue(issue, other, labelOf)}` : `${issue.path}: ${issue.message}`)
    } else if (!errors[f.path]) errors[f.path] = humanIssue(issue, f, labelOf)
  }
  /** The message of a refused save, said with the field's label. */
  const describe = (error: PanelCallError) => {
    const first = error.issues[0]
    const f = first && fieldOf(first.path)
    return first && f ? `${f.label}: ${humanIssue(first, f, labelOf)}` : error.message
  }
  return { errors, elsewhere, setSaveIssues, describe }
}

/** What a save will change, each key from its value now to the new one, before it is sent. */
function ReviewChanges({
  section,
  changes,
  effective,
  values,
  opened,
  saving,
  onClose,
  onConfirm,
}: {
  section: SectionSpec
  changes: FieldSpec[]
  effective: Json
  values: Values
  opened: boolean
  saving: boolean
  onClose: () => void
  onConfirm: () => void
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={`Save ${section.title.toLowerCase()}?`} centered size="lg">
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
          <Button variant="default" onClick={onClose}>
            Keep editing
          </Button>
          <Button loading={saving} onClick={onConfirm} data-testid="confirm-save">
            Save {changes.length} change{changes.length === 1 ? '' : 's'}
          </Button>
        </Group>
      </Stack>
    </Modal>
  )
}

/** A change that takes away what rules name (a field's `impact`): the list, and keep or go ahead. */
function ImpactDialog({
  opened,
  pending,
  saving,
  onKeep,
  onProceed,
}: {
  opened: boolean
  /** The last change asked about, kept while the dialog closes. */
  pending: { field: FieldSpec; entries: Array<{ where: string; name: string; problem: string }> } | null
  saving: boolean
  onKeep: () => void
  onProceed: () => void
}) {
  const impact = pending?.field.impact
  return (
    <Modal opened={opened} onClose={onKeep} title={impact?.title ?? ''} centered size="lg" data-testid="setting-impact">
      <Stack>
        <Text size="sm">{impact?.message}</Text>
        <NameImpactList entries={pending?.entries ?? []} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onKeep}>
            {impact?.keep}
          </Button>
          <Button color="red" loading={saving} onClick={onProceed} data-testid="setting-impact-confirm">
            {impact?.proceed}
          </Button>
        </Group>
      </Stack>
    </Modal>
  )
}

/** The bar under a section: what needs fixing, how many changes are unsaved, Discard and Review and save. */
function SaveBar({
  problems,
  unsaved,
  canSave,
  onDiscard,
  onReview,
}: {
  problems: number
  unsaved: number
  canSave: boolean
  onDiscard: () => void
  onReview: () => void
}) {
  return (
    <Group justify="flex-end" mt="lg" pos="sticky" bottom={0} py="sm" bg="var(--mantine-color-body)" style={{ zIndex: 2 }}>
      {problems > 0 && (
        <Text size="sm" c={ink.danger} data-testid="section-problems" role="status">
          {problems} field{problems === 1 ? ' needs' : 's need'} fixing before saving
        </Text>
      )}
      {unsaved > 0 && (
        <Badge color={ink.accent} variant="outline" data-testid="unsaved">
          {unsaved} unsaved change{unsaved === 1 ? '' : 's'}
        </Badge>
      )}
      <Button
        variant="default"
        leftSection={<IconRestore size={16} />}
        disabled={unsaved === 0}
        data-testid="discard-settings"
        onClick={onDiscard}
      >
        Discard
      </Button>
      {/* Shown refused to a view-only admin: the one control here a keyboard reaches to hear why. */}
      <Allowed op="settings.update">
        <Button leftSection={<IconDeviceFloppy size={16} />} disabled={!canSave} onClick={onReview} data-testid="save-settings">
          Review and save
        </Button>
      </Allowed>
    </Group>
  )
}

/**
 * One section: its own values, checked while typing, its own save, and a review of what will change
 * before saving. A key set at start-up is shown read-only with its badge and never enters a change.
 */
export function SectionForm({
  section,
  allFields,
  effective,
  startup,
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
  /** The keys set at start-up, with their sources (settings.get). */
  startup: StartupKey[]
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
  const [reviewing, setReviewing] = useState(false)
  // A change a field's `impact` says takes something away, waiting for the admin's answer (kept while its dialog closes).
  const [asking, setAsking] = useState(false)
  const [impact, setImpact] = useState<{ field: FieldSpec; entries: Array<{ where: string; name: string; problem: string }> } | null>(null)
  // Remounts the fields on Discard, so editors holding their own text (JSON) start again from the saved value.
  const [generation, setGeneration] = useState(0)
  const save = useOpMutation('settings.update')
  // Only what the panel may change: a key set at start-up is never part of a save.
  const editable = section.fields.filter((f) => !startupKeyFor(startup, f.path))
  const patch = sectionPatch(editable, effective, values)
  const invalidJson = editable.filter((f) => rawJson[f.path] !== undefined)
  const changes = editable.filter((f) => JSON.stringify(getPath(effective, f.path)) !== JSON.stringify(values[f.path]))
  const { errors, elsewhere, setSaveIssues, describe } = useSectionIssues(section, allFields, effective, values, patch)
  const problems = Object.keys(errors).length + elsewhere.length + invalidJson.length

  const submit = async () => {
    if (!patch) return
    try {
      // With the values this view read for each changed field: a field another admin changed since is refused (409 CONFLICT).
      const base = Object.fromEntries(changes.map((f) => [f.path, getPath(effective, f.path) ?? null]))
      await save.mutateAsync({ patch, base })
      onDraft(undefined)
      setSaveIssues([])
      notifications.show({ color: 'teal', title: `${section.title} saved`, message: 'In effect from the next request; no restart needed.' })
    } catch (e) {
      const error = e as PanelCallError
      setSaveIssues(error.issues)
      notifications.show({ color: 'red', title: 'Not saved', message: describe(error) })
    } finally {
      setReviewing(false)
    }
  }

  /** Confirmed in the review: first each changed field with an `impact` is asked what the change takes away. */
  const confirm = async () => {
    for (const f of changes) {
      if (!f.impact) continue
      // A question that fails asks nothing: the save's own checks still hold.
      const entries = await f.impact.ask(getPath(effective, f.path), values[f.path]).catch(() => [])
      if (entries.length > 0) {
        setReviewing(false)
        setImpact({ field: f, entries })
        setAsking(true)
        return
      }
    }
    await submit()
  }
  /** Keep: the field goes back to its saved value; nothing is sent. */
  const keep = () => {
    if (impact) {
      onDraft({ ...values, [impact.field.path]: getPath(effective, impact.field.path) })
      setGeneration((g) => g + 1)
    }
    setAsking(false)
  }

  return (
    <Card withBorder padding="lg" data-testid={`section-${section.id}`}>
      <Title order={3} size="h4">
        {section.title}
      </Title>
      <Text size="sm" c="dimmed" mb="md">
        {section.description}
      </Text>
      <Stack gap="lg">
        {extra}
        <Editable op="settings.update" note>
          <Stack gap="lg" key={generation}>
            {section.fields.map((f) => (
              <Field
                key={f.path}
                spec={f}
                value={values[f.path]}
                error={errors[f.path]}
                startup={startupKeyFor(startup, f.path)}
                rawText={rawJson[f.path]}
                onRawText={(text) => onRawJson(f.path, text)}
                onChange={(v) => {
                  setSaveIssues([])
                  onDraft({ ...values, [f.path]: v })
                }}
              />
            ))}
          </Stack>
        </Editable>
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
      <SaveBar
        problems={problems}
        unsaved={patch || invalidJson.length > 0 ? changes.length + invalidJson.length : 0}
        canSave={Boolean(patch) && problems === 0}
        onDiscard={() => {
          onDraft(undefined)
          for (const f of invalidJson) onRawJson(f.path, undefined)
          setSaveIssues([])
          setGeneration((g) => g + 1)
        }}
        onReview={() => setReviewing(true)}
      />
      <ReviewChanges
        section={section}
        changes={changes}
        effective={effective}
        values={values}
        opened={reviewing}
        saving={save.isPending}
        onClose={() => setReviewing(false)}
        onConfirm={confirm}
      />
      <ImpactDialog
        opened={asking}
        pending={impact}
        saving={save.isPending}
        onKeep={keep}
        onProceed={() => void submit().finally(() => setAsking(false))}
      />
    </Card>
  )
}
