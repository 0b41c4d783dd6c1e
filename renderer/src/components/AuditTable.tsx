import { Badge, Table, Text, Tooltip } from '@mantine/core'
import type { AuditEventView, PersonView } from '../../../server/panel/contract'
import { actorName, eventDetail, eventTitle } from '../audit-text'
import { Ago, dateTime } from '../format'
import { ink } from '../ink'

export function OutcomeBadge({ outcome }: { outcome: 'success' | 'failure' }) {
  return (
    <Badge size="sm" variant="outline" color={outcome === 'success' ? ink.ok : ink.danger}>
      {outcome}
    </Badge>
  )
}

/** The person an event names: name and email, the id on hover; an unknown id as itself. */
export function Person({
  id,
  people,
  fallback,
  testId = 'audit-person',
}: {
  id: string | null
  people: Record<string, PersonView>
  fallback?: string | null
  testId?: string
}) {
  if (!id) {
    return (
      <Text size="sm" c="dimmed">
        {fallback ?? 'nobody'}
      </Text>
    )
  }
  const person = people[id]
  return (
    <Tooltip label={`User id ${id}`} withArrow>
      <div data-testid={testId} data-user-id={id}>
        {person ? (
          <>
            <Text size="sm" fw={500} lineClamp={1}>
              {person.name}
            </Text>
            <Text size="xs" c="dimmed" lineClamp={1}>
              {person.email}
            </Text>
          </>
        ) : (
          <Text size="sm" c="dimmed">
            deleted user ({id.slice(0, 8)}…)
          </Text>
        )}
      </div>
    </Tooltip>
  )
}

/** Events about a thing (the configuration, a client, a backup…), not a person: without a target, they name nobody. */
const ABOUT_THINGS = /^(config|oidc\.client|backup|restore|provider|import|jwt|forward-auth|mail)\b/

/** Who an event is about: its target, else its actor (their own account); else an email the detail names (a failed sign-in). */
function subjectOf(e: AuditEventView): { id: string | null; fallback: string | null } {
  const id = e.targetUserId ?? (ABOUT_THINGS.test(e.type) ? null : e.actorUserId)
  const email = typeof e.detail?.email === 'string' ? e.detail.email : null
  return { id, fallback: email ?? '—' }
}

/** Who did it: the acting user ("themself" when they acted on their own account), else the OS account, link or channel. */
function Actor({ e, people }: { e: AuditEventView; people: Record<string, PersonView> }) {
  if (e.actorUserId && subjectOf(e).id === e.actorUserId)
    return (
      <Text size="sm" c="dimmed" data-testid="audit-actor">
        themself
      </Text>
    )
  if (e.actorUserId) return <Person id={e.actorUserId} people={people} testId="audit-actor" />
  const label = typeof e.detail?.actor === 'string' ? e.detail.actor : typeof e.detail?.via === 'string' ? e.detail.via : null
  return (
    <Text size="sm" c="dimmed" data-testid="audit-actor">
      {label ? actorName(label) : 'anonymous'}
    </Text>
  )
}

export function AuditTable({
  events,
  people,
  compact = false,
}: {
  events: AuditEventView[]
  people: Record<string, PersonView>
  compact?: boolean
}) {
  return (
    // The scrolling region takes focus, so keyboard users can scroll it (WCAG 2.1.1; axe scrollable-region-focusable).
    <Table.ScrollContainer
      minWidth={compact ? 500 : 900}
      scrollAreaProps={{ viewportProps: { tabIndex: 0, role: 'region', 'aria-label': 'Audit events (scrolls sideways)' } }}
    >
      <Table striped highlightOnHover verticalSpacing="xs" fz="sm" data-testid="audit-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>When</Table.Th>
            <Table.Th>Event</Table.Th>
            <Table.Th>Outcome</Table.Th>
            <Table.Th>Actor</Table.Th>
            <Table.Th>Person</Table.Th>
            {!compact && <Table.Th style={{ whiteSpace: 'nowrap' }}>IP address</Table.Th>}
            <Table.Th>Detail</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {events.map((e) => {
            const subject = subjectOf(e)
            return (
              <Table.Tr key={e.id}>
                <Table.Td>
                  <Tooltip label={dateTime(e.createdAt)} withArrow>
                    <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                      {compact ? <Ago when={e.createdAt} /> : dateTime(e.createdAt)}
                    </Text>
                  </Tooltip>
                </Table.Td>
                <Table.Td>
                  <Tooltip label={e.type} withArrow>
                    <Text size="sm">{eventTitle(e.type)}</Text>
                  </Tooltip>
                </Table.Td>
                <Table.Td>
                  <OutcomeBadge outcome={e.outcome} />
                </Table.Td>
                <Table.Td>
                  <Actor e={e} people={people} />
                </Table.Td>
                <Table.Td>
                  <Person id={subject.id} people={people} fallback={subject.fallback} />
                </Table.Td>
                {!compact && <Table.Td>{e.ipAddress || '—'}</Table.Td>}
                <Table.Td>
                  <Text size="sm" lineClamp={2} data-testid="audit-detail">
                    {eventDetail(e.detail)}
                  </Text>
                  {!compact && e.requestId && (
                    <Text size="xs" c="dimmed" ff="monospace" data-testid="audit-request-id">
                      request {e.requestId}
                    </Text>
                  )}
                </Table.Td>
              </Table.Tr>
            )
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  )
}
