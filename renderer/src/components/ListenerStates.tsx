import { Badge, Card, Code, Table, Text, Title } from '@mantine/core'
import type { ListenerStateView } from '../../../server/features/overview/panel-contract'
import { useOp } from '../api'
import { count, dateTime } from '../format'
import { ink } from '../ink'
import { ErrorNotice, Loading } from './common'

const LABEL: Record<string, string> = { ldap: 'LDAP', ldaps: 'LDAPS', metrics: 'Metrics' }
const STATE: Record<ListenerStateView['state'], { color: string; label: string }> = {
  listening: { color: ink.ok, label: 'listening' },
  stopped: { color: ink.muted, label: 'stopped' },
  failed: { color: ink.danger, label: 'failed' },
}

/**
 * The listeners besides the HTTP one, as `listeners.state` reports them (the one answer the Overview,
 * the LDAP view and the Metrics view show): state, address, open connections and last error.
 * `names`: only these (the LDAP view: ldap and ldaps).
 */
export function ListenerStates({ names, testId = 'listener-states' }: { names?: string[]; testId?: string }) {
  const states = useOp('listeners.state', {}, { refetchInterval: 5_000 })
  const rows = (states.data?.listeners ?? []).filter((l) => !names || names.includes(l.name))
  return (
    <Card withBorder padding="md" data-testid={testId}>
      <Title order={3} size="h4" mb="sm">
        Listeners
      </Title>
      {states.isPending ? (
        <Loading />
      ) : states.error ? (
        <ErrorNotice error={states.error} onRetry={() => void states.refetch()} />
      ) : (
        <Table fz="sm" verticalSpacing={6}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Listener</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Address</Table.Th>
              <Table.Th style={{ textAlign: 'right' }}>Connections</Table.Th>
              <Table.Th>Last error</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((l) => (
              <Table.Tr key={l.name} data-testid={`listener-${l.name}`} data-state={l.state}>
                <Table.Td>{LABEL[l.name] ?? l.name}</Table.Td>
                <Table.Td>
                  <Badge size="sm" variant="outline" color={STATE[l.state].color} data-testid={`listener-${l.name}-state`}>
                    {STATE[l.state].label}
                  </Badge>
                </Table.Td>
                <Table.Td data-testid={`listener-${l.name}-address`}>{l.address ? <Code>{l.address}</Code> : '—'}</Table.Td>
                <Table.Td style={{ textAlign: 'right' }} data-testid={`listener-${l.name}-connections`}>
                  {count(l.connections)}
                </Table.Td>
                <Table.Td data-testid={`listener-${l.name}-error`}>
                  {l.lastError ? (
                    <>
                      <Text size="sm" c={ink.danger} style={{ wordBreak: 'break-word' }}>
                        {l.lastError.message}
                      </Text>
                      <Text size="xs" c={ink.muted}>
                        {dateTime(l.lastError.at)}
                      </Text>
                    </>
                  ) : (
                    '—'
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Card>
  )
}
