import { BarChart } from '@mantine/charts'
import { Card, Group, SegmentedControl, SimpleGrid, Stack, Table, Text, ThemeIcon, Title } from '@mantine/core'
import { IconBuilding, IconDeviceDesktop, IconUserOff, IconUsers } from '@tabler/icons-react'
import dayjs from 'dayjs'
import { type ReactNode, useState } from 'react'
import { useOp } from '../api'
import { AuditTable } from '../components/AuditTable'
import { ErrorNotice, Loading, PageHeader } from '../components/common'
import { SecondFactorSummary } from '../features/two-factor/SecondFactorSummary'
import { bytes, dateTime, duration } from '../format'

function Stat({ label, value, icon, testId }: { label: string; value: number; icon: ReactNode; testId: string }) {
  return (
    <Card withBorder padding="md">
      <Group justify="space-between">
        <div>
          <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
            {label}
          </Text>
          <Text fz={28} fw={700} data-testid={testId}>
            {value.toLocaleString()}
          </Text>
        </div>
        <ThemeIcon variant="light" size={42} radius="md">
          {icon}
        </ThemeIcon>
      </Group>
    </Card>
  )
}

export default function Overview() {
  const [range, setRange] = useState<'hours' | 'days'>('hours')
  const info = useOp('server.info', {}, { refetchInterval: 10_000 })
  const overview = useOp('overview.get', { range }, { refetchInterval: 10_000 })

  const chart = (overview.data?.activity ?? []).map((b) => ({
    when: range === 'hours' ? dayjs(b.start).format('HH:00') : dayjs(b.start).format('MMM D'),
    'Sign-ins': b.signIns,
    Failures: b.failures,
  }))

  return (
    <Stack>
      <PageHeader title="Overview" description="How this Gatehouse is doing right now." />
      <SecondFactorSummary />
      <ErrorNotice error={overview.error ?? info.error} onRetry={() => void overview.refetch()} />
      {overview.data ? (
        <SimpleGrid cols={{ base: 2, md: 4 }}>
          <Stat label="Users" value={overview.data.counts.users} icon={<IconUsers />} testId="count-users" />
          <Stat
            label="Active sessions"
            value={overview.data.counts.activeSessions}
            icon={<IconDeviceDesktop />}
            testId="count-sessions"
          />
          <Stat
            label="Organizations"
            value={overview.data.counts.organizations}
            icon={<IconBuilding />}
            testId="count-organizations"
          />
          <Stat label="Banned users" value={overview.data.counts.bannedUsers} icon={<IconUserOff />} testId="count-banned" />
        </SimpleGrid>
      ) : (
        !overview.error && <Loading />
      )}

      <SimpleGrid cols={{ base: 1, lg: 3 }}>
        <Card withBorder padding="md" style={{ gridColumn: 'span 2' }}>
          <Group justify="space-between" mb="sm">
            <Title order={4}>Sign-ins and failures</Title>
            <SegmentedControl
              size="xs"
              value={range}
              onChange={(v) => setRange(v as 'hours' | 'days')}
              data={[
                { label: 'Last 24 hours', value: 'hours' },
                { label: 'Last 14 days', value: 'days' },
              ]}
            />
          </Group>
          <BarChart
            h={240}
            data={chart}
            dataKey="when"
            series={[
              { name: 'Sign-ins', color: 'teal.6' },
              { name: 'Failures', color: 'red.6' },
            ]}
            withLegend
            tickLine="y"
            data-testid="activity-chart"
          />
        </Card>
        <Card withBorder padding="md">
          <Title order={4} mb="sm">
            Server
          </Title>
          {info.data && (
            <Table fz="sm" verticalSpacing={6} data-testid="server-table">
              <Table.Tbody>
                <Table.Tr>
                  <Table.Th>API URL</Table.Th>
                  <Table.Td style={{ wordBreak: 'break-all' }}>{info.data.apiURL}</Table.Td>
                </Table.Tr>
                <Table.Tr>
                  <Table.Th>Port</Table.Th>
                  <Table.Td>{info.data.port}</Table.Td>
                </Table.Tr>
                <Table.Tr>
                  <Table.Th>Uptime</Table.Th>
                  <Table.Td>{duration(info.data.uptimeSeconds)}</Table.Td>
                </Table.Tr>
                <Table.Tr>
                  <Table.Th>Started</Table.Th>
                  <Table.Td>{dateTime(info.data.startedAt)}</Table.Td>
                </Table.Tr>
                <Table.Tr>
                  <Table.Th>Version</Table.Th>
                  <Table.Td>{info.data.version}</Table.Td>
                </Table.Tr>
                <Table.Tr>
                  <Table.Th>Database</Table.Th>
                  <Table.Td>
                    {bytes(info.data.databaseBytes)}
                    <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
                      {info.data.databaseFile}
                    </Text>
                  </Table.Td>
                </Table.Tr>
              </Table.Tbody>
            </Table>
          )}
        </Card>
      </SimpleGrid>

      <Card withBorder padding="md">
        <Title order={4} mb="sm">
          Recent events
        </Title>
        {overview.data && overview.data.recent.length === 0 ? (
          <Text c="dimmed" size="sm">
            Nothing has happened yet. Sign-ups, sign-ins and admin actions appear here as they occur.
          </Text>
        ) : (
          <AuditTable events={overview.data?.recent ?? []} compact />
        )}
      </Card>
    </Stack>
  )
}
