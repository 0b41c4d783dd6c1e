import { BarChart } from '@mantine/charts'
import {
  Alert,
  Anchor,
  Button,
  Card,
  CloseButton,
  Group,
  List,
  Progress,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Table,
  Text,
  ThemeIcon,
  Title,
} from '@mantine/core'
import { IconBuilding, IconCircleCheckFilled, IconCircleDashed, IconDeviceDesktop, IconUserOff, IconUsers } from '@tabler/icons-react'
import type { SetupStep } from '../../../../server/features/overview/panel-contract'
import { type ReactNode, useState } from 'react'
import type { OpOutput } from '../../../../server/panel/contract'
import { Allowed } from '../../access'
import { useOp, useOpMutation } from '../../api'

type ServerInfo = OpOutput<'server.info'>
import { AuditTable } from '../../components/AuditTable'
import { ErrorNotice, Loading, PageHeader } from '../../components/common'
import { ListenerStates } from '../../components/ListenerStates'
import { ink } from '../../ink'
import { SecondFactorSummary } from '../two-factor/SecondFactorSummary'
import { StartupBadge, startupReason, useStartup } from '../../startup'
import { StorageOutage } from './StorageOutage'
import { axisLabel, bytes, count, dateTime, duration } from '../../format'

function Stat({ label, value, icon, testId }: { label: string; value: number; icon: ReactNode; testId: string }) {
  return (
    <Card withBorder padding="md">
      <Group justify="space-between">
        <div>
          <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
            {label}
          </Text>
          <Text fz={28} fw={700} data-testid={testId}>
            {count(value)}
          </Text>
        </div>
        <ThemeIcon variant="light" size={42} radius="md">
          {icon}
        </ThemeIcon>
      </Group>
    </Card>
  )
}

const STEPS: Record<SetupStep['id'], { title: string; todo: string; done: (value: string | null) => string; href: string; link: string }> =
  {
    baseURL: {
      title: 'A base URL other machines can reach',
      todo: 'The server answers on a loopback address only. Start it with --host 0.0.0.0 and --base-url set to the LAN name apps use.',
      done: (v) => `Apps reach it at ${v}.`,
      href: '#/network',
      link: 'Network',
    },
    trustedOrigin: {
      title: "Your app's origin",
      todo: 'Add the origin of the web app that signs users in (e.g. https://app.example.com), or browsers refuse its calls.',
      done: (v) => `${v} is trusted.`,
      href: '#/settings?section=application',
      link: 'Trusted origins',
    },
    smtp: {
      title: 'SMTP, proven by a test mail',
      todo: 'Verification and password reset emails wait in the outbox until an SMTP server delivers them. Set one and send a test mail.',
      done: (v) => `Mail goes out through ${v}.`,
      href: '#/email',
      link: 'Email',
    },
    admin: {
      title: 'The first administrator',
      todo: 'Create a user with the admin role (or run gatehouse user create --role admin).',
      done: (v) => `${v} is an administrator.`,
      href: '#/users',
      link: 'Users',
    },
  }

/**
 * Anyone who reaches the server can create an account (signUp.mode "open" with a way to sign up
 * on): said on the overview, with the one-click change to invitation-only sign-up.
 */
function OpenSignUp({ signUp }: { signUp: OpOutput<'overview.get'>['signUp'] }) {
  const save = useOpMutation('settings.update')
  // signUp.mode set at start-up: the one-click change would not take effect, so the reason stands in for it.
  const fixed = useStartup().of('signUp.mode')
  if (!signUp.open) return null
  return (
    // The title and the button in the palette's darkest shades: orange 6-9 stayed under 4.5:1 (axe).
    <Alert
      color="orange"
      title="Anyone who reaches this server can create an account"
      styles={{ title: { color: ink.danger } }}
      data-testid="open-sign-up"
    >
      <Stack gap="xs">
        <Text size="sm">
          Sign-up is open ({signUp.methods.join(', ')}).{' '}
          {signUp.verificationRequired
            ? 'A new account must verify its email before it signs in.'
            : signUp.appsRequireVerified
              ? 'A new account signs in at once; your apps are told of it only once it verifies its email.'
              : 'Email verification is not required: a new account is signed in, and vouched for to your apps, under any address it claims.'}
        </Text>
        {fixed ? (
          <Group gap={6} data-testid="sign-up-startup">
            <StartupBadge source={fixed.source} />
            <Text size="sm">{startupReason(fixed.source)}</Text>
          </Group>
        ) : (
          <Group>
            <Allowed op="settings.update">
              <Button
                size="xs"
                color="red.9"
                data-testid="sign-up-invitation-only"
                loading={save.isPending}
                onClick={() => save.mutate({ patch: { signUp: { mode: 'invitation' } } })}
              >
                Allow sign-up by invitation only
              </Button>
            </Allowed>
          </Group>
        )}
        <ErrorNotice error={save.error} />
      </Stack>
    </Alert>
  )
}

const DISMISSED = 'gatehouse.firstRun.dismissed'

/**
 * The first card until every step is done or the admin dismisses it (remembered by this browser);
 * each step reads the live server, so it ticks itself off.
 */
function FirstRun({ steps }: { steps: SetupStep[] }) {
  const [dismissed, setDismissed] = useState(() => window.localStorage.getItem(DISMISSED) === '1')
  const done = steps.filter((s) => s.done).length
  if (done === steps.length || dismissed) return null
  return (
    <Card withBorder padding="lg" data-testid="first-run">
      <Group justify="space-between" mb="xs">
        <Title order={3} size="h4">
          Get this Gatehouse ready
        </Title>
        <Group gap="xs">
          <Text size="sm" data-testid="first-run-progress">
            {done} of {steps.length} done
          </Text>
          <CloseButton
            aria-label="Dismiss the set-up checklist"
            data-testid="first-run-dismiss"
            onClick={() => {
              window.localStorage.setItem(DISMISSED, '1')
              setDismissed(true)
            }}
          />
        </Group>
      </Group>
      <Progress value={(done / steps.length) * 100} size="sm" mb="md" aria-label="Set-up progress" />
      <List spacing="md" center>
        {steps.map((step) => {
          const text = STEPS[step.id]
          return (
            <List.Item
              key={step.id}
              data-testid={`setup-${step.id}`}
              data-done={step.done}
              icon={
                step.done ? (
                  <ThemeIcon color="teal.9" variant="transparent" size={24} role="img" aria-label="done">
                    <IconCircleCheckFilled size={22} />
                  </ThemeIcon>
                ) : (
                  <ThemeIcon color="gray.7" variant="transparent" size={24} role="img" aria-label="to do">
                    <IconCircleDashed size={22} />
                  </ThemeIcon>
                )
              }
            >
              <Text size="sm" fw={600} td={step.done ? 'line-through' : undefined}>
                {text.title}
              </Text>
              <Text size="sm" c="dimmed">
                {step.done ? text.done(step.value) : text.todo}{' '}
                {!step.done && (
                  <Anchor href={text.href} size="sm" data-testid={`setup-${step.id}-link`}>
                    Go to {text.link}
                  </Anchor>
                )}
              </Text>
            </List.Item>
          )
        })}
      </List>
    </Card>
  )
}

/** Where this server listens, since when, and its database. */
function ServerCard({ info }: { info: ServerInfo | undefined }) {
  return (
    <Card withBorder padding="md">
      <Title order={3} size="h4" mb="sm">
        Server
      </Title>
      {info && (
        <Table fz="sm" verticalSpacing={6} data-testid="server-table">
          <Table.Tbody>
            <Table.Tr>
              <Table.Th>API URL</Table.Th>
              <Table.Td style={{ wordBreak: 'break-all' }}>{info.apiURL}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Port</Table.Th>
              <Table.Td>{info.port}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Uptime</Table.Th>
              <Table.Td>{duration(info.uptimeSeconds)}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Started</Table.Th>
              <Table.Td>{dateTime(info.startedAt)}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Version</Table.Th>
              <Table.Td>{info.version}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Database</Table.Th>
              <Table.Td>
                {bytes(info.databaseBytes)}
                <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
                  {info.databaseFile}
                </Text>
              </Table.Td>
            </Table.Tr>
          </Table.Tbody>
        </Table>
      )}
    </Card>
  )
}

/** Allowed forward-auth requests per protected app over the last day. */
function ProtectedAppsCard({ rows }: { rows: { app: string; allowed: number }[] }) {
  return (
    <Card withBorder padding="md" data-testid="protected-apps">
      <Title order={3} size="h4" mb="sm">
        Protected apps (last 24 hours)
      </Title>
      <Table fz="sm" verticalSpacing={6}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>App</Table.Th>
            <Table.Th style={{ textAlign: 'right' }}>Allowed requests</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => (
            <Table.Tr key={row.app}>
              <Table.Td>{row.app}</Table.Td>
              <Table.Td style={{ textAlign: 'right' }}>{count(row.allowed)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Text size="xs" c="dimmed" mt="xs">
        Refusals are in the audit log (forward-auth.refused).
      </Text>
    </Card>
  )
}

export default function Overview() {
  const [range, setRange] = useState<'hours' | 'days'>('hours')
  const info = useOp('server.info', {}, { refetchInterval: 10_000 })
  const overview = useOp('overview.get', { range }, { refetchInterval: 10_000 })

  const activity = overview.data?.activity ?? []
  const totals = activity.reduce((t, b) => ({ signIns: t.signIns + b.signIns, failures: t.failures + b.failures }), {
    signIns: 0,
    failures: 0,
  })
  const chart = activity.map((b) => ({
    when: axisLabel(b.start, range === 'hours' ? 'hour' : 'day'),
    'Sign-ins': b.signIns,
    Failures: b.failures,
  }))

  return (
    <Stack>
      <PageHeader title="Overview" description="How this Gatehouse is doing right now." />
      {overview.data?.outage && <StorageOutage outage={overview.data.outage} />}
      {overview.data && <OpenSignUp signUp={overview.data.signUp} />}
      {overview.data && <FirstRun steps={overview.data.setup} />}
      <SecondFactorSummary />
      <ErrorNotice error={overview.error ?? info.error} onRetry={() => void overview.refetch()} />
      {overview.data ? (
        <SimpleGrid cols={{ base: 2, md: 4 }}>
          <Stat label="Users" value={overview.data.counts.users} icon={<IconUsers />} testId="count-users" />
          <Stat label="Active sessions" value={overview.data.counts.activeSessions} icon={<IconDeviceDesktop />} testId="count-sessions" />
          <Stat label="Organizations" value={overview.data.counts.organizations} icon={<IconBuilding />} testId="count-organizations" />
          <Stat label="Banned users" value={overview.data.counts.bannedUsers} icon={<IconUserOff />} testId="count-banned" />
        </SimpleGrid>
      ) : (
        !overview.error && <Loading />
      )}

      <SimpleGrid cols={{ base: 1, lg: 3 }}>
        <Card withBorder padding="md" style={{ gridColumn: 'span 2' }}>
          <Group justify="space-between" mb="sm">
            <div>
              <Title order={3} size="h4">
                Sign-ins and failures
              </Title>
              <Text size="sm" c="dimmed" data-testid="activity-summary">
                {overview.data
                  ? `${totals.signIns} sign-in${totals.signIns === 1 ? '' : 's'}, ${totals.failures} failed, ${range === 'hours' ? 'in the last 24 hours' : 'in the last 14 days'}`
                  : ' '}
              </Text>
            </div>
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
              { name: 'Sign-ins', color: 'teal.7' },
              { name: 'Failures', color: 'red.7' },
            ]}
            withLegend
            tickLine="y"
            data-testid="activity-chart"
          />
        </Card>
        <ServerCard info={info.data} />
      </SimpleGrid>

      <ListenerStates />

      {overview.data && overview.data.protectedApps.length > 0 ? <ProtectedAppsCard rows={overview.data.protectedApps} /> : null}

      <Card withBorder padding="md">
        <Title order={3} size="h4" mb="sm">
          Recent events
        </Title>
        {overview.data && overview.data.recent.length === 0 ? (
          <Text c="dimmed" size="sm">
            Nothing has happened yet. Sign-ups, sign-ins and admin actions appear here as they occur.
          </Text>
        ) : (
          <AuditTable events={overview.data?.recent ?? []} people={overview.data?.people ?? {}} compact />
        )}
      </Card>
    </Stack>
  )
}
