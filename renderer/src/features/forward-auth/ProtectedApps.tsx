import {
  ActionIcon,
  Button,
  Card,
  Checkbox,
  Code,
  Group,
  Select,
  Stack,
  Switch,
  Table,
  Tabs,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { IconArrowDown, IconArrowUp, IconPencil, IconTrash } from '@tabler/icons-react'
import { useEffect, useState } from 'react'
import { useOp, useOpMutation } from '../../api'
import { Allowed, Editable } from '../../access'
import { ErrorNotice, Loading, PageHeader } from '../../components/common'
import { ink } from '../../ink'
import { GroupNameProblems } from '../groups/GroupNameProblems'

type Policy = 'bypass' | 'signed-in' | 'two-factor' | 'deny'
interface Rule {
  domain: string
  resources?: string[]
  policy: Policy
  subject?: { roles?: string[]; organizations?: string[]; teams?: string[] }
}

const POLICIES: { value: Policy; label: string }[] = [
  { value: 'bypass', label: 'Bypass (no sign-in)' },
  { value: 'signed-in', label: 'Signed in' },
  { value: 'two-factor', label: 'Signed in with a second factor' },
  { value: 'deny', label: 'Deny' },
]

const list = (text: string): string[] | undefined => {
  const items = text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean)
  return items.length ? items : undefined
}

const who = (rule: Rule): string => {
  const parts = [
    rule.subject?.roles && `roles: ${rule.subject.roles.join(', ')}`,
    rule.subject?.organizations && `orgs: ${rule.subject.organizations.join(', ')}`,
    rule.subject?.teams && `teams: ${rule.subject.teams.join(', ')}`,
  ].filter(Boolean)
  return parts.length ? parts.join(' · ') : rule.policy === 'bypass' ? 'anyone' : 'any signed-in user'
}

/** The add/edit form of one rule. */
function RuleForm({ initial, onSubmit, onCancel }: { initial: Rule | null; onSubmit: (rule: Rule) => void; onCancel?: () => void }) {
  const [domain, setDomain] = useState(initial?.domain ?? '')
  const [resources, setResources] = useState(initial?.resources?.join('\n') ?? '')
  const [policy, setPolicy] = useState<Policy>(initial?.policy ?? 'signed-in')
  const [roles, setRoles] = useState(initial?.subject?.roles?.join(', ') ?? '')
  const [orgs, setOrgs] = useState(initial?.subject?.organizations?.join(', ') ?? '')
  const [teams, setTeams] = useState(initial?.subject?.teams?.join(', ') ?? '')
  const [problem, setProblem] = useState<string | null>(null)
  const submit = () => {
    if (!/^(\*\.)?[a-z0-9.-]+$/i.test(domain.trim())) return setProblem('Enter a host name such as wiki.example.lan or *.example.lan')
    for (const r of list(resources) ?? []) {
      try {
        new RegExp(r)
      } catch (e) {
        return setProblem(`Invalid regular expression ${r}: ${(e as Error).message}`)
      }
    }
    const subject = { roles: list(roles), organizations: list(orgs), teams: list(teams) }
    const hasSubject = Object.values(subject).some(Boolean)
    setProblem(null)
    onSubmit({
      domain: domain.trim().toLowerCase(),
      ...(list(resources) ? { resources: list(resources) } : {}),
      policy,
      ...(hasSubject ? { subject: Object.fromEntries(Object.entries(subject).filter(([, v]) => v)) } : {}),
    })
  }
  return (
    <Stack gap="xs" data-testid="rule-form">
      <Group grow align="flex-start">
        <TextInput
          label="Domain"
          placeholder="wiki.example.lan or *.example.lan"
          value={domain}
          onChange={(e) => setDomain(e.currentTarget.value)}
        />
        <Select label="Policy" data={POLICIES} value={policy} allowDeselect={false} onChange={(v) => v && setPolicy(v as Policy)} />
      </Group>
      <Textarea
        label="Paths (regular expressions, one per line; empty: every path)"
        placeholder="^/admin(/.*)?$"
        autosize
        minRows={1}
        value={resources}
        onChange={(e) => setResources(e.currentTarget.value)}
      />
      <Group grow>
        <TextInput label="Roles (any of)" value={roles} onChange={(e) => setRoles(e.currentTarget.value)} />
        <TextInput label="Organizations (slugs, any of)" value={orgs} onChange={(e) => setOrgs(e.currentTarget.value)} />
        <TextInput label="Teams (any of)" value={teams} onChange={(e) => setTeams(e.currentTarget.value)} />
      </Group>
      {problem ? (
        <Text c={ink.danger} size="sm" role="alert">
          {problem}
        </Text>
      ) : null}
      <Group>
        <Button size="xs" onClick={submit}>
          {initial ? 'Update rule' : 'Add rule'}
        </Button>
        {onCancel ? (
          <Button size="xs" variant="default" onClick={onCancel}>
            Cancel
          </Button>
        ) : null}
      </Group>
    </Stack>
  )
}

function TestBox() {
  const [url, setUrl] = useState('')
  const [email, setEmail] = useState('')
  const [secondFactor, setSecondFactor] = useState(false)
  const [asked, setAsked] = useState<{ url: string; email: string; secondFactor: boolean } | null>(null)
  const answer = useOp('forwardAuth.test', asked ?? { url: 'x', email: '', secondFactor: false }, { enabled: asked !== null })
  return (
    <Card withBorder data-testid="forward-auth-test">
      <Title order={3} size="h4" mb="sm">
        Test
      </Title>
      <Group align="flex-end">
        <TextInput
          label="URL"
          placeholder="https://wiki.example.lan/admin"
          value={url}
          onChange={(e) => setUrl(e.currentTarget.value)}
          style={{ flex: 2 }}
        />
        <TextInput
          label="User email (empty: not signed in)"
          value={email}
          onChange={(e) => setEmail(e.currentTarget.value)}
          style={{ flex: 1 }}
        />
        <Checkbox label="Passed a second factor" checked={secondFactor} onChange={(e) => setSecondFactor(e.currentTarget.checked)} />
        <Button onClick={() => setAsked({ url, email, secondFactor })} disabled={!url}>
          Test
        </Button>
      </Group>
      <ErrorNotice error={answer.error} />
      {asked && answer.data ? (
        <Stack gap={4} mt="sm" data-testid="forward-auth-test-answer">
          <Text>
            <strong>{answer.data.status || '—'}</strong> {answer.data.outcome}
            {answer.data.rule ? ` · decided by ${answer.data.rule}` : ''}
          </Text>
          {Object.entries(answer.data.headers).map(([k, v]) => (
            <Code key={k}>{`${k}: ${v}`}</Code>
          ))}
        </Stack>
      ) : null}
    </Card>
  )
}

/** The rules in their order, each with its move, edit and delete buttons. */
function RulesTable({
  rules,
  onMove,
  onEdit,
  onDelete,
}: {
  rules: Rule[]
  onMove: (index: number, by: number) => void
  onEdit: (index: number) => void
  onDelete: (index: number) => void
}) {
  return (
    <Table data-testid="forward-auth-rules">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>#</Table.Th>
          <Table.Th>Domain</Table.Th>
          <Table.Th>Paths</Table.Th>
          <Table.Th>Policy</Table.Th>
          <Table.Th>Who</Table.Th>
          <Table.Th />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rules.map((rule, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rules have no id; a row is its position in the ordered list
          <Table.Tr key={`${i}-${rule.domain}`}>
            <Table.Td>{i + 1}</Table.Td>
            <Table.Td>{rule.domain}</Table.Td>
            <Table.Td>{rule.resources?.join(' ') ?? 'all'}</Table.Td>
            <Table.Td>{rule.policy}</Table.Td>
            <Table.Td>
              {who(rule)}
              <GroupNameProblems where={(at) => at.startsWith(`forwardAuth.rules[${i}].`)} testId={`group-names-rule-${i}`} />
            </Table.Td>
            <Table.Td>
              <Group gap={4} wrap="nowrap">
                <ActionIcon variant="subtle" aria-label="Move up" disabled={i === 0} onClick={() => onMove(i, -1)}>
                  <IconArrowUp size={14} />
                </ActionIcon>
                <ActionIcon variant="subtle" aria-label="Move down" disabled={i === rules.length - 1} onClick={() => onMove(i, 1)}>
                  <IconArrowDown size={14} />
                </ActionIcon>
                <ActionIcon variant="subtle" aria-label="Edit" onClick={() => onEdit(i)}>
                  <IconPencil size={14} />
                </ActionIcon>
                <ActionIcon variant="subtle" color="red" aria-label="Delete" onClick={() => onDelete(i)}>
                  <IconTrash size={14} />
                </ActionIcon>
              </Group>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  )
}

/** What the view edits and saves. */
type Settings = { enabled: boolean; defaultPolicy: Policy; rules: Rule[] }
type Snippets = { nginx: string; caddy: string; traefik: string }

/** The proxy configuration of one saved rule, for nginx, Caddy and Traefik (one text with docs/FORWARD-AUTH.md). */
function ProxySnippets({ rules, snippets }: { rules: { domain: string }[]; snippets: Snippets[] }) {
  const [snippetFor, setSnippetFor] = useState<string | null>('0')
  const snippet = snippets[Number(snippetFor ?? 0)]
  return (
    <Card withBorder>
      <Group mb="sm">
        <Title order={3} size="h4">
          Proxy configuration
        </Title>
        <Select
          aria-label="Rule"
          data={rules.map((r, i) => ({ value: String(i), label: `${i + 1}. ${r.domain}` }))}
          value={snippetFor}
          onChange={setSnippetFor}
          allowDeselect={false}
        />
      </Group>
      {snippet ? (
        <Tabs defaultValue="nginx">
          <Tabs.List>
            <Tabs.Tab value="nginx">nginx</Tabs.Tab>
            <Tabs.Tab value="caddy">Caddy</Tabs.Tab>
            <Tabs.Tab value="traefik">Traefik</Tabs.Tab>
          </Tabs.List>
          {(['nginx', 'caddy', 'traefik'] as const).map((k) => (
            <Tabs.Panel key={k} value={k} pt="xs">
              <Code block>{snippet[k]}</Code>
            </Tabs.Panel>
          ))}
        </Tabs>
      ) : null}
      <Text size="xs" c="dimmed" mt="xs">
        Saved rules only. Replace APP_HOST:APP_PORT with the app's address; see docs/FORWARD-AUTH.md.
      </Text>
    </Card>
  )
}

export default function ProtectedAppsPage() {
  const current = useOp('forwardAuth.get', {})
  const save = useOpMutation('forwardAuth.save')
  const [draft, setDraft] = useState<Settings | null>(null)
  // The settings as this view read them: a save sends only what the admin changed, each with its
  // read value (a field another admin changed since is refused, 409 CONFLICT, and shown beside it).
  const [read, setRead] = useState<Settings | null>(null)
  const [editing, setEditing] = useState<number | null>(null)
  useEffect(() => {
    if (current.data && !draft) {
      const settings = { enabled: current.data.enabled, defaultPolicy: current.data.defaultPolicy, rules: current.data.rules as Rule[] }
      setDraft(settings)
      setRead(settings)
    }
  }, [current.data, draft])
  if (!current.data || !draft || !read)
    return current.error ? <ErrorNotice error={current.error} onRetry={() => void current.refetch()} /> : <Loading />
  const data = current.data
  const submit = () => {
    const changed = (['enabled', 'defaultPolicy', 'rules'] as const).filter((k) => JSON.stringify(draft[k]) !== JSON.stringify(read[k]))
    if (changed.length === 0) return
    const sent = Object.fromEntries(changed.map((k) => [k, draft[k]]))
    const saved = draft
    save.mutate(
      { ...sent, base: Object.fromEntries(changed.map((k) => [`forwardAuth.${k}`, read[k]])) },
      {
        onSuccess: () => {
          // What this admin stored is the next save's base at once: an edit made before the
          // reread below is then saved over it, not refused as another admin's change (409).
          setRead((r) => (r ? { ...r, ...sent } : r))
          // Read again and show what is stored now, unless the admin has edited since the save.
          void current.refetch().then(() => setDraft((d) => (d === saved ? null : d)))
        },
      },
    )
  }
  const conflict = (field: keyof Settings) => save.error?.messageFor(`forwardAuth.${field}`)
  const move = (i: number, by: number) => {
    const rules = [...draft.rules]
    const [rule] = rules.splice(i, 1)
    if (rule) rules.splice(i + by, 0, rule)
    setDraft({ ...draft, rules })
  }
  return (
    <Stack>
      <PageHeader
        title="Protected apps"
        description="Apps without a sign-in of their own, behind nginx, Caddy or Traefik: the proxy asks Gatehouse about every request. The first matching rule decides."
        actions={
          <Allowed op="forwardAuth.save">
            <Button onClick={submit} loading={save.isPending} data-testid="forward-auth-save">
              Save changes
            </Button>
          </Allowed>
        }
      />
      <ErrorNotice error={save.error} />
      <Editable op="forwardAuth.save" note>
        <Stack>
          <Card withBorder>
            <Group align="flex-end">
              <Switch
                label="Forward auth enabled"
                checked={draft.enabled}
                onChange={(e) => setDraft({ ...draft, enabled: e.currentTarget.checked })}
                error={conflict('enabled')}
              />
              <Select
                label="When no rule matches"
                data={POLICIES}
                value={draft.defaultPolicy}
                allowDeselect={false}
                onChange={(v) => v && setDraft({ ...draft, defaultPolicy: v as Policy })}
                error={conflict('defaultPolicy')}
                data-testid="forward-auth-default-policy"
              />
            </Group>
            <Text size="sm" c="dimmed" mt="xs">
              nginx: <Code>{data.endpoints.authRequest}</Code> · Caddy/Traefik: <Code>{data.endpoints.forwardAuth}</Code>
            </Text>
            {!data.crossSubDomainCookies.enabled ? (
              <Text size="sm" fw={600} mt="xs">
                advanced.crossSubDomainCookies is off: the session cookie reaches only Gatehouse's own host name, so apps on other names
                always get 401.
              </Text>
            ) : null}
          </Card>
          <Card withBorder>
            {conflict('rules') ? (
              <Text size="sm" c="red.9" mb="xs" data-testid="forward-auth-rules-conflict">
                Rules {conflict('rules')}
              </Text>
            ) : null}
            <RulesTable
              rules={draft.rules}
              onMove={move}
              onEdit={setEditing}
              onDelete={(i) => setDraft({ ...draft, rules: draft.rules.filter((_, j) => j !== i) })}
            />
            {editing !== null ? (
              <RuleForm
                key={`edit-${editing}`}
                initial={draft.rules[editing] ?? null}
                onSubmit={(rule) => {
                  setDraft({ ...draft, rules: draft.rules.map((r, j) => (j === editing ? rule : r)) })
                  setEditing(null)
                }}
                onCancel={() => setEditing(null)}
              />
            ) : (
              <RuleForm
                key={`add-${draft.rules.length}`}
                initial={null}
                onSubmit={(rule) => setDraft({ ...draft, rules: [...draft.rules, rule] })}
              />
            )}
          </Card>
        </Stack>
      </Editable>
      {data.snippets.length > 0 ? <ProxySnippets rules={data.rules} snippets={data.snippets} /> : null}
      <TestBox />
    </Stack>
  )
}
