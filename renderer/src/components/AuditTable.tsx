import { Badge, Code, Table, Text, Tooltip } from '@mantine/core'
import type { AuditEventView } from '../../../server/panel/contract'
import { dateTime, fromNow } from '../format'

export function OutcomeBadge({ outcome }: { outcome: 'success' | 'failure' }) {
  return (
    <Badge size="sm" variant="light" color={outcome === 'success' ? 'teal' : 'red'}>
      {outcome}
    </Badge>
  )
}

const short = (id: string | null) => (id ? `${id.slice(0, 8)}…` : '—')

export function AuditTable({ events, compact = false }: { events: AuditEventView[]; compact?: boolean }) {
  return (
    <Table.ScrollContainer minWidth={compact ? 500 : 900}>
      <Table striped highlightOnHover verticalSpacing="xs" fz="sm" data-testid="audit-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>When</Table.Th>
            <Table.Th>Event</Table.Th>
            <Table.Th>Outcome</Table.Th>
            <Table.Th>User</Table.Th>
            {!compact && <Table.Th>IP address</Table.Th>}
            {!compact && <Table.Th>Detail</Table.Th>}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {events.map((e) => (
            <Table.Tr key={e.id}>
              <Table.Td>
                <Tooltip label={dateTime(e.createdAt)} withArrow>
                  <Text size="sm">{compact ? fromNow(e.createdAt) : dateTime(e.createdAt)}</Text>
                </Tooltip>
              </Table.Td>
              <Table.Td>
                <Code>{e.type}</Code>
              </Table.Td>
              <Table.Td>
                <OutcomeBadge outcome={e.outcome} />
              </Table.Td>
              <Table.Td>
                <Tooltip label={e.targetUserId ?? e.actorUserId ?? 'no user'} withArrow>
                  <Text size="sm" ff="monospace">
                    {short(e.targetUserId ?? e.actorUserId)}
                  </Text>
                </Tooltip>
              </Table.Td>
              {!compact && <Table.Td>{e.ipAddress || '—'}</Table.Td>}
              {!compact && (
                <Table.Td>
                  <Text size="xs" ff="monospace" lineClamp={2}>
                    {e.detail ? JSON.stringify(e.detail) : ''}
                  </Text>
                </Table.Td>
              )}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  )
}
