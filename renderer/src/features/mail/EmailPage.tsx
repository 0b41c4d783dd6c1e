import {
  Alert,
  Badge,
  Button,
  Card,
  Code,
  Group,
  NumberInput,
  PasswordInput,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Tabs,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { useForm } from '@mantine/form'
import { notifications } from '@mantine/notifications'
import { IconDeviceFloppy, IconSend } from '@tabler/icons-react'
import { useState } from 'react'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { Allowed, Editable } from '../../access'
import { ErrorNotice, Loading, PageHeader } from '../../components/common'
import { StartupBadge } from '../../startup'
import { Outbox } from './Outbox'
import { useFieldDraft } from '../../object-save'

type Smtp = { host: string; port: number; secure: boolean; user: string; hasPassword: boolean; from: string }
type Startup = { smtpUrl: string | null; keys: string[] }

/** SMTP set by start-up options: said, with the badge, and the fields read-only (still focusable, each saying why). */
function StartupNotice({ startup }: { startup: Startup }) {
  const source = startup.smtpUrl ? '--smtp-url (or GATEHOUSE_SMTP_URL)' : `--config or the environment: ${startup.keys.join(', ')}`
  return (
    <Alert color="violet" variant="light" data-testid="smtp-startup" title="Set at start-up">
      <Group gap={6} mb={4}>
        <StartupBadge source={source} testId="smtp-startup-badge" />
        <Text size="sm">{source}</Text>
      </Group>
      {startup.smtpUrl && <Code data-testid="smtp-startup-url">{startup.smtpUrl}</Code>}
      <Text size="sm" mt={4}>
        Start-up options win over the panel: change them where the server is started.
      </Text>
    </Alert>
  )
}

function SmtpForm({ smtp, startup }: { smtp: Smtp; startup: Startup }) {
  const save = useOpMutation('email.update')
  const fixed = Boolean(startup.smtpUrl) || startup.keys.length > 0
  /** Read-only fields when start-up options set the SMTP settings: focusable, with the reason as their description. */
  const lock = fixed ? { readOnly: true, description: 'Set at start-up: read-only here' } : {}
  const form = useForm({
    initialValues: { host: smtp.host, port: smtp.port, secure: smtp.secure, user: smtp.user, password: '', from: smtp.from },
  })
  return (
    <form
      onSubmit={form.onSubmit(async (values) => {
        try {
          await save.mutateAsync({ ...values, password: values.password || undefined })
          notifications.show({ color: 'teal', title: 'SMTP saved', message: 'New messages use these settings.' })
        } catch (e) {
          const error = e as PanelCallError
          for (const issue of error.issues) form.setFieldError(issue.path.replace(/^mail\.(smtp\.)?/, ''), issue.message)
          notifications.show({ color: 'red', title: 'Not saved', message: error.message })
        }
      })}
    >
      <Editable op="email.update" note>
        <Stack gap="sm">
          {fixed && <StartupNotice startup={startup} />}
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TextInput label="SMTP host" placeholder="smtp.example.com" {...form.getInputProps('host')} {...lock} data-testid="smtp-host" />
            <NumberInput label="Port" min={1} max={65535} {...form.getInputProps('port')} {...lock} data-testid="smtp-port" />
            <TextInput label="User" {...form.getInputProps('user')} {...lock} />
            <PasswordInput
              label="Password"
              placeholder={smtp.hasPassword ? '••••••••' : ''}
              description={smtp.hasPassword ? 'Stored. Leave empty to keep it.' : undefined}
              {...form.getInputProps('password')}
              {...lock}
            />
            <TextInput label="From" {...form.getInputProps('from')} {...lock} />
            <Switch
              mt="lg"
              label="TLS from the start (port 465)"
              {...form.getInputProps('secure', { type: 'checkbox' })}
              {...(fixed ? { onChange: () => {}, 'aria-readonly': true, description: 'Set at start-up: read-only here' } : {})}
              data-testid="smtp-secure"
            />
          </SimpleGrid>
          {!fixed && (
            <Group justify="flex-end">
              <Button type="submit" leftSection={<IconDeviceFloppy size={16} />} loading={save.isPending} data-testid="smtp-save">
                Save SMTP settings
              </Button>
            </Group>
          )}
        </Stack>
      </Editable>
    </form>
  )
}

function TestEmail() {
  const send = useOpMutation('email.sendTest')
  const [to, setTo] = useState('')
  return (
    <Group align="flex-end">
      <TextInput
        style={{ flex: 1 }}
        label="Send a test email to"
        placeholder="you@example.com"
        value={to}
        onChange={(e) => setTo(e.currentTarget.value)}
        data-testid="test-to"
      />
      <Allowed op="email.sendTest">
        <Button
          leftSection={<IconSend size={16} />}
          loading={send.isPending}
          data-testid="test-send"
          onClick={() =>
            send.mutate(
              { to },
              {
                onSuccess: (r) =>
                  notifications.show({
                    color: r.status === 'sent' ? 'teal' : 'yellow',
                    title: r.status === 'sent' ? 'Test email sent' : 'Test email queued',
                    message: r.status === 'sent' ? `Delivered to the SMTP server for ${to}` : 'No SMTP server is configured yet.',
                  }),
                onError: (e) => notifications.show({ color: 'red', title: 'Test email failed', message: e.message }),
              },
            )
          }
        >
          Send test
        </Button>
      </Allowed>
    </Group>
  )
}

interface TemplateView {
  kind: string
  subject: string
  body: string
  custom: boolean
  placeholders: Array<{ name: string; description: string }>
}

/** A field's error in a red dark enough to read (WCAG AA) on white, and the text typed in its usual colour. */
const READABLE_ERROR = { error: { color: 'var(--mantine-color-red-9)' }, input: { color: 'var(--mantine-color-text)' } }

/** Subject and body of one message, edited with the placeholders it takes; saved, or reset to the built-in one. */
function TemplateEditor({
  template,
  onDraft,
}: {
  template: TemplateView
  onDraft: (draft: { subject: string; body: string } | null) => void
}) {
  const save = useOpMutation('email.saveTemplate')
  const reset = useOpMutation('email.resetTemplate')
  // Each field follows the stored template until the admin edits it; a save sends only the fields
  // edited, each with the text it was read at (another admin's change since: 409, shown beside it).
  const subjectDraft = useFieldDraft(template.subject)
  const bodyDraft = useFieldDraft(template.body)
  const subject = subjectDraft.value
  const body = bodyDraft.value
  const [errors, setErrors] = useState<{ subject?: string; body?: string }>({})
  const changed = subject !== subjectDraft.read || body !== bodyDraft.read
  const edit = (next: { subject: string; body: string }) => {
    if (next.subject !== subject) subjectDraft.set(next.subject)
    if (next.body !== body) bodyDraft.set(next.body)
    setErrors({})
    onDraft(next.subject !== subjectDraft.read || next.body !== bodyDraft.read ? next : null)
  }
  const saved = () => {
    subjectDraft.reset()
    bodyDraft.reset()
    onDraft(null)
  }
  const saveInput = () => {
    const input: { kind: string; subject?: string; body?: string; base: Record<string, string> } = { kind: template.kind, base: {} }
    if (subject !== subjectDraft.read) {
      input.subject = subject
      input.base.subject = subjectDraft.read
    }
    if (body !== bodyDraft.read) {
      input.body = body
      input.base.body = bodyDraft.read
    }
    return input
  }
  return (
    <Card withBorder padding="md">
      <Editable op={['email.saveTemplate', 'email.resetTemplate']}>
        <Stack gap="sm">
          <Group justify="space-between">
            <Text fw={600}>Edit this message</Text>
            <Badge variant="light" color={template.custom ? 'blue' : 'gray'} data-testid="template-state">
              {template.custom ? 'Edited' : 'Built in'}
            </Badge>
          </Group>
          <TextInput
            label="Subject"
            value={subject}
            onChange={(e) => edit({ subject: e.currentTarget.value, body })}
            error={errors.subject}
            styles={READABLE_ERROR}
            data-testid="template-subject"
          />
          <Textarea
            label="Message"
            description="Plain text; a blank line starts a new paragraph. The button with the link, the footer and the signature are added below it."
            autosize
            minRows={5}
            value={body}
            onChange={(e) => edit({ subject, body: e.currentTarget.value })}
            error={errors.body}
            styles={READABLE_ERROR}
            data-testid="template-body"
          />
          <Text size="sm" id="template-placeholders">
            Placeholders:{' '}
            {template.placeholders.map((p, i) => (
              <span key={p.name}>
                {i > 0 ? ', ' : ''}
                <Code>{`{{${p.name}}}`}</Code> {p.description}
              </span>
            ))}
          </Text>
          <Group justify="flex-end">
            <Button
              variant="default"
              disabled={!template.custom}
              loading={reset.isPending}
              onClick={() =>
                reset.mutate(
                  { kind: template.kind, base: { subject: subjectDraft.read, body: bodyDraft.read } },
                  {
                    onSuccess: () => {
                      saved()
                      notifications.show({ color: 'teal', title: 'Built-in message restored', message: template.kind })
                    },
                    onError: (e) => {
                      setErrors({ subject: e.messageFor('subject'), body: e.messageFor('body') })
                      notifications.show({ color: 'red', title: 'Not reset', message: e.message })
                    },
                  },
                )
              }
              data-testid="template-reset"
            >
              Reset to default
            </Button>
            <Button
              leftSection={<IconDeviceFloppy size={16} />}
              disabled={!changed}
              loading={save.isPending}
              onClick={() =>
                save.mutate(saveInput(), {
                  onSuccess: () => {
                    saved()
                    notifications.show({ color: 'teal', title: 'Template saved', message: 'New messages use it.' })
                  },
                  onError: (e) => {
                    const fields = { subject: e.messageFor('subject'), body: e.messageFor('body') }
                    setErrors(fields)
                    // A field's problem is shown beside it; anything else as a toast.
                    if (!fields.subject && !fields.body) notifications.show({ color: 'red', title: 'Not saved', message: e.message })
                  },
                })
              }
              data-testid="template-save"
            >
              Save template
            </Button>
          </Group>
        </Stack>
      </Editable>
    </Card>
  )
}

function Templates({ kinds }: { kinds: string[] }) {
  const [kind, setKind] = useState(kinds[0] ?? 'verification')
  const [draft, setDraft] = useState<{ subject: string; body: string } | null>(null)
  const templates = useOp('email.templates', {})
  const template = templates.data?.find((t) => t.kind === kind)
  const preview = useOp('email.preview', draft ? { kind, draft } : { kind }, { placeholderData: (prev) => prev })
  return (
    <Stack>
      <Select
        label="Template"
        data={kinds}
        value={kind}
        onChange={(v) => {
          if (!v) return
          setKind(v)
          setDraft(null)
        }}
        allowDeselect={false}
        w={260}
        data-testid="template-kind"
      />
      {template && <TemplateEditor key={template.kind} template={template} onDraft={setDraft} />}
      <ErrorNotice error={preview.error} />
      {preview.data && (
        <Card withBorder padding="md">
          <Text fw={600} mb="xs" data-testid="preview-subject">
            {preview.data.subject}
          </Text>
          {/* Rendered in a sandboxed frame: no scripts, no same-origin access. */}
          <iframe
            title="Email preview"
            sandbox=""
            srcDoc={preview.data.html}
            style={{ width: '100%', height: 360, border: 0, background: 'white' }}
          />
        </Card>
      )}
    </Stack>
  )
}

export default function Email() {
  const settings = useOp('email.get', {}, { refetchOnWindowFocus: false })
  return (
    <Stack>
      <PageHeader
        title="Email"
        description="Outgoing mail: every message goes through the outbox and is delivered by SMTP in the background."
      />
      <ErrorNotice error={settings.error} onRetry={() => void settings.refetch()} />
      {!settings.data ? (
        !settings.error && <Loading />
      ) : (
        <Tabs defaultValue="smtp">
          <Tabs.List>
            <Tabs.Tab value="smtp">SMTP</Tabs.Tab>
            <Tabs.Tab value="templates">Templates</Tabs.Tab>
            <Tabs.Tab value="outbox">Outbox</Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="smtp" pt="md">
            <Stack>
              <Card withBorder padding="lg">
                <Group mb="sm" gap="xs">
                  <Title order={4}>SMTP server</Title>
                  {settings.data.configured ? (
                    <Badge color="teal.9">configured</Badge>
                  ) : (
                    <Badge color="gray.7">not configured: messages wait in the outbox</Badge>
                  )}
                </Group>
                <SmtpForm key={JSON.stringify(settings.data.smtp)} smtp={settings.data.smtp} startup={settings.data.startup} />
              </Card>
              <Card withBorder padding="lg">
                <TestEmail />
              </Card>
            </Stack>
          </Tabs.Panel>
          <Tabs.Panel value="templates" pt="md">
            <Templates kinds={settings.data.templates} />
          </Tabs.Panel>
          <Tabs.Panel value="outbox" pt="md">
            <Outbox configured={settings.data.configured} />
          </Tabs.Panel>
        </Tabs>
      )}
    </Stack>
  )
}
