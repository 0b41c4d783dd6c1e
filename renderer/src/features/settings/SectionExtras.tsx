import { Alert, Button, Card, Code, Stack, Table, Text, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { IconInfoCircle, IconLockOpen } from '@tabler/icons-react'
import { Allowed } from '../../access'
import { useOp, useOpMutation } from '../../api'
import { ErrorNotice } from '../../components/common'
import { dateTime } from '../../format'

/** Accounts locked by the password throttle, with a way to lift each lock. */
export function LockedAccounts() {
  const locks = useOp('security.locks', {})
  const unlock = useOpMutation('security.unlock')
  const rows = locks.data?.locks ?? []
  return (
    <Card withBorder padding="md" data-testid="locked-accounts">
      <Title order={4}>Locked accounts</Title>
      <Text size="sm" c="dimmed" mb="sm">
        Sign-in names with too many failed passwords. Each unlocks by itself at the time shown.
      </Text>
      <ErrorNotice error={locks.error ?? unlock.error} onRetry={() => void locks.refetch()} />
      {rows.length === 0 ? (
        <Text size="sm">No account is locked.</Text>
      ) : (
        <Table fz="sm" striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Identifier</Table.Th>
              <Table.Th>Failures</Table.Th>
              <Table.Th>Locked until</Table.Th>
              <Table.Th>
                <span className="visually-hidden">Action</span>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((lock) => (
              <Table.Tr key={lock.key}>
                <Table.Td>
                  <code>{lock.key}</code>
                </Table.Td>
                <Table.Td>{lock.failures}</Table.Td>
                <Table.Td>{dateTime(lock.lockedUntil)}</Table.Td>
                <Table.Td>
                  <Allowed op="security.unlock">
                    <Button
                      size="xs"
                      variant="light"
                      leftSection={<IconLockOpen size={14} />}
                      loading={unlock.isPending && unlock.variables?.key === lock.key}
                      onClick={() =>
                        unlock.mutate(
                          { key: lock.key },
                          { onSuccess: () => notifications.show({ message: `${lock.key} unlocked`, color: 'green' }) },
                        )
                      }
                    >
                      Unlock
                    </Button>
                  </Allowed>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Card>
  )
}

/** What the server reads once when it starts (base URL, base path), under Application and URLs. */
export function ReadAtStartUp({ basePath }: { basePath: string }) {
  const info = useOp('server.info', {})
  return (
    <Alert color="blue" variant="light" icon={<IconInfoCircle />} title="Set when the server starts" data-testid="base-url">
      <Stack gap={4}>
        <Text size="sm">
          Base URL: <Code>{info.data?.apiURL ?? '…'}</Code>. Apps and the links in emails use it. For other machines on the LAN start with{' '}
          <Code>--host 0.0.0.0 --base-url http://NAME:PORT</Code> (or behind a proxy, its https URL).
        </Text>
        <Text size="sm">
          Base path: <Code>{basePath}</Code>. Change it with <Code>--config</Code> and a restart.
        </Text>
      </Stack>
    </Alert>
  )
}
