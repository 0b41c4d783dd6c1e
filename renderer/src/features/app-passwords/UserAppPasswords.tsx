import { Badge, Stack, Table, Text, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { ConfirmButton, ErrorNotice, Loading } from '../../components/common'
import { Ago, dateTime } from '../../format'
import { Allowed } from '../../access'

/**
 * A user's app passwords (Users drawer, under Second factors): name, last four characters, last
 * use and expiry, never the secret; Revoke stops one at the next LDAP bind.
 */
export function UserAppPasswords({ userId, email }: { userId: string; email: string }) {
  const list = useOp('appPasswords.list', { userId })
  const revoke = useOpMutation('appPasswords.revoke')
  if (list.isPending) return <Loading />
  if (list.error) return <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
  const items = list.data.appPasswords
  return (
    <Stack gap="xs" data-testid="user-app-passwords">
      <Text fw={500} size="sm">
        App passwords ({items.length})
      </Text>
      {items.length === 0 ? (
        <Text size="sm" c="dimmed">
          No app password. The user makes them on the hosted page /ui/account/app-passwords.
        </Text>
      ) : (
        <Table fz="sm">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Ends in</Table.Th>
              <Table.Th>Last used</Table.Th>
              <Table.Th>Expires</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {items.map((p) => (
              <Table.Tr key={p.id}>
                <Table.Td>{p.name}</Table.Td>
                <Table.Td>…{p.hint}</Table.Td>
                <Table.Td>
                  <Ago when={p.lastUsedAt} none="never" />
                </Table.Td>
                <Table.Td>
                  {p.expiresAt === null ? 'never' : dateTime(p.expiresAt)}{' '}
                  {p.expired && (
                    <Badge color="gray" size="sm">
                      expired
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>
                  <Allowed op="appPasswords.revoke">
                    <ConfirmButton
                      label="Revoke"
                      title={`Revoke the app password "${p.name}" of ${email}`}
                      message="It stops working at once: the app using it must be given a new one."
                      confirmLabel="Revoke"
                      loading={revoke.isPending}
                      testId={`revoke-app-password-${p.id}`}
                      onConfirm={() =>
                        revoke.mutateAsync({ userId, id: p.id }).then(
                          () => notifications.show({ color: 'teal', title: 'Done', message: `"${p.name}" is revoked` }),
                          (e: PanelCallError) => notifications.show({ color: 'red', title: 'Not revoked', message: e.message }),
                        )
                      }
                    />
                  </Allowed>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  )
}
