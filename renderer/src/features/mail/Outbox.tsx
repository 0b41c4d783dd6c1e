import { Alert, Anchor, Badge, Button, Drawer, Group, SegmentedControl, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core'
import { IconExternalLink, IconMailOpened, IconRefresh } from '@tabler/icons-react'
import { Fragment, useState } from 'react'
import { useOp, useOpMutation } from '../../api'
import { Allowed, useAccess } from '../../access'
import { ErrorNotice, Loading } from '../../components/common'
import { dateTime } from '../../format'

const URL_PATTERN = /https?:\/\/[^\s<>"')]+/g

/** A message's text as runs of plain text and links, each keyed by where it starts. */
function runsOf(text: string): Array<{ at: number; text: string; link: boolean }> {
  const runs: Array<{ at: number; text: string; link: boolean }> = []
  let at = 0
  for (const match of text.matchAll(URL_PATTERN)) {
    const start = match.index ?? 0
    if (start > at) runs.push({ at, text: text.slice(at, start), link: false })
    // A sentence's full stop after an address is not part of it.
    const url = match[0].replace(/[.,;:]+$/, '')
    runs.push({ at: start, text: url, link: true })
    at = start + url.length
  }
  if (at < text.length) runs.push({ at, text: text.slice(at), link: false })
  return runs
}

/** A message's text with every http(s) address a link that opens in a new tab. */
function LinkedText({ text }: { text: string }) {
  return (
    <Text
      component="pre"
      size="sm"
      style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word', fontFamily: 'inherit' }}
      data-testid="message-text"
    >
      {runsOf(text).map((run) =>
        run.link ? (
          <Anchor key={run.at} href={run.text} target="_blank" rel="noopener noreferrer">
            {run.text}
          </Anchor>
        ) : (
          <Fragment key={run.at}>{run.text}</Fragment>
        ),
      )}
    </Text>
  )
}

/** One message of the outbox: its text with clickable links (development mail). */
function MessageDrawer({ id, onClose }: { id: string | null; onClose: () => void }) {
  const message = useOp('email.message', { id: id ?? '' }, { enabled: Boolean(id), refetchOnWindowFocus: false })
  const m = message.data
  return (
    <Drawer opened={Boolean(id)} onClose={onClose} position="right" size="lg" title={m ? m.subject : 'Message'}>
      <ErrorNotice error={message.error} />
      {!m ? (
        !message.error && <Loading />
      ) : (
        <Stack gap="sm">
          <Text size="sm">
            To <strong>{m.to}</strong>, {dateTime(m.createdAt)}{' '}
            <Badge variant="outline" ml="xs">
              {m.kind}
            </Badge>
          </Text>
          {m.links.length > 0 && (
            <Stack gap={4}>
              <Title order={4}>Links</Title>
              {m.links.map((link) => (
                <Anchor key={link} href={link} target="_blank" rel="noopener noreferrer" size="sm" style={{ wordBreak: 'break-all' }}>
                  <IconExternalLink size={14} aria-hidden style={{ marginRight: 4, verticalAlign: 'middle' }} />
                  {link}
                </Anchor>
              ))}
            </Stack>
          )}
          <Title order={4}>Text</Title>
          <LinkedText text={m.text} />
        </Stack>
      )}
    </Drawer>
  )
}

/**
 * The Email view's Outbox tab: every message, its delivery status and, without SMTP (development
 * mail, nothing is sent), an Open button showing the message with its links clickable, for whoever
 * may act as another user (`user:impersonate`: a mailed link signs its recipient in).
 */
export function Outbox({ configured }: { configured: boolean }) {
  const [status, setStatus] = useState('all')
  const [open, setOpen] = useState<string | null>(null)
  const access = useAccess()
  const outbox = useOp('email.outbox', status === 'all' ? {} : { status: status as 'queued' | 'sending' | 'sent' | 'failed' }, {
    refetchInterval: 5_000,
  })
  const retry = useOpMutation('email.retry')
  const readable = !configured && access.can('user:impersonate')
  return (
    <Stack>
      {!configured && (
        <Alert color="blue" title="Development mail" data-testid="development-mail">
          No SMTP server is configured, so nothing is sent: every message stays here.
          {readable ? ' Open one to read it and follow its links.' : ''} Configure SMTP in the SMTP tab to deliver them.
        </Alert>
      )}
      <SegmentedControl
        w={320}
        value={status}
        onChange={setStatus}
        data={[
          { label: 'All', value: 'all' },
          { label: 'Queued', value: 'queued' },
          { label: 'Sending', value: 'sending' },
          { label: 'Sent', value: 'sent' },
          { label: 'Failed', value: 'failed' },
        ]}
      />
      <ErrorNotice error={outbox.error} />
      {!outbox.data ? (
        <Loading />
      ) : outbox.data.messages.length === 0 ? (
        <Text size="sm" c="dimmed">
          No message here. Verification, reset and invitation emails appear as they are sent.
        </Text>
      ) : (
        <Table fz="sm" striped data-testid="outbox-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Created</Table.Th>
              <Table.Th>To</Table.Th>
              <Table.Th>Subject</Table.Th>
              <Table.Th>Kind</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {outbox.data.messages.map((m) => (
              <Table.Tr key={m.id}>
                <Table.Td>{dateTime(m.createdAt)}</Table.Td>
                <Table.Td>{m.to}</Table.Td>
                <Table.Td>{m.subject}</Table.Td>
                <Table.Td>
                  <Badge variant="outline">{m.kind}</Badge>
                </Table.Td>
                <Table.Td>
                  <Badge color={m.status === 'sent' ? 'teal.9' : m.status === 'failed' ? 'red.9' : 'yellow.4'} autoContrast>
                    {m.status}
                  </Badge>
                  {m.error && (
                    <Text size="xs" c="red">
                      {m.error}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    {readable && (
                      <Button
                        size="compact-xs"
                        variant="light"
                        leftSection={<IconMailOpened size={12} />}
                        onClick={() => setOpen(m.id)}
                        aria-label={`Open the message to ${m.to}: ${m.subject}`}
                      >
                        Open
                      </Button>
                    )}
                    {m.status === 'failed' && (
                      <Allowed op="email.retry">
                        <Button
                          size="compact-xs"
                          variant="light"
                          leftSection={<IconRefresh size={12} />}
                          onClick={() => retry.mutate({ id: m.id })}
                        >
                          Retry
                        </Button>
                      </Allowed>
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <MessageDrawer id={open} onClose={() => setOpen(null)} />
    </Stack>
  )
}
