import { Badge, Group, Stack, Table, Text } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { ConfirmButton, ErrorNotice, Loading } from '../../components/common'
import { dateTime } from '../../format'
import { Allowed } from '../../access'

/**
 * A user's connected applications (Users drawer): what each OpenID Connect client was allowed to
 * see, and Revoke (its tokens stop working at once; the next sign-in to it asks again).
 */
export function UserConnectedApps({ userId, email }: { userId: string; email: string }) {
  const apps = useOp('oidc.userApps', { userId })
  const revoke = useOpMutation('oidc.revokeUserApp')
  if (apps.isPending) return <Loading />
  if (apps.error) return <ErrorNotice error={apps.error} onRetry={() => void apps.refetch()} />
  if (apps.data.apps.length === 0) return <Text c="dimmed">No application is connected to this account.</Text>
  return (
    <Stack gap="sm">
      <Table data-testid="user-connected-apps">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Application</Table.Th>
            <Table.Th>May see</Table.Th>
            <Table.Th>Allowed</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {apps.data.apps.map((app) => (
            <Table.Tr key={app.clientId}>
              <Table.Td>{app.name}</Table.Td>
              <Table.Td>
                <Group gap={4}>
                  {[...app.scopes, ...app.claims].map((s) => (
                    <Badge key={s} variant="light" size="sm">
                      {s}
                    </Badge>
                  ))}
                </Group>
              </Table.Td>
              <Table.Td>{dateTime(app.grantedAt)}</Table.Td>
              <Table.Td>
                <Allowed op="oidc.revokeUserApp">
                  <ConfirmButton
                    label="Revoke"
                    title={`Revoke ${app.name} for ${email}`}
                    message="The application's tokens stop working at once; the next sign-in to it asks for consent again."
                    confirmLabel="Revoke"
                    onConfirm={() =>
                      revoke.mutate(
                        { userId, clientId: app.clientId },
                        {
                          onSuccess: () => void apps.refetch(),
                          onError: (e: PanelCallError) => notifications.show({ color: 'red', title: 'Not revoked', message: e.message }),
                        },
                      )
                    }
                  />
                </Allowed>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  )
}
