import { Badge, Table, Text } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import type { PanelCallError } from '../../api'
import { useOpMutation } from '../../api'
import { ConfirmButton } from '../../components/common'
import { dateTime } from '../../format'
import { Allowed } from '../../access'

interface PasskeyView {
  id: string
  name: string | null
  deviceType: string
  backedUp: boolean
  counter: number
  createdAt: number | null
}

const failed = (title: string) => (e: PanelCallError) => notifications.show({ color: 'red', title, message: e.message })

/** A user's passkeys with a remove action (the user is told by mail). */
export function PasskeyTable({ userId, passkeys }: { userId: string; passkeys: PasskeyView[] }) {
  const remove = useOpMutation('passkey.remove')
  if (passkeys.length === 0) {
    return (
      <Text size="sm" c="dimmed">
        No passkey.
      </Text>
    )
  }
  return (
    <Table data-testid="passkeys">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Name</Table.Th>
          <Table.Th>Kind</Table.Th>
          <Table.Th>Uses</Table.Th>
          <Table.Th>Added</Table.Th>
          <Table.Th />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {passkeys.map((p) => (
          <Table.Tr key={p.id}>
            <Table.Td>{p.name ?? <Text c="dimmed">unnamed</Text>}</Table.Td>
            <Table.Td>
              <Badge variant="light">{p.deviceType === 'multiDevice' ? 'synced' : 'device-bound'}</Badge>{' '}
              {p.backedUp && <Badge color="gray">backed up</Badge>}
            </Table.Td>
            <Table.Td>{p.counter}</Table.Td>
            <Table.Td>{p.createdAt ? dateTime(p.createdAt) : '—'}</Table.Td>
            <Table.Td>
              <Allowed op="passkey.remove">
                <ConfirmButton
                  label="Remove"
                  title="Remove passkey"
                  message="The user can no longer sign in with it and is told by mail."
                  confirmLabel="Remove"
                  loading={remove.isPending}
                  onConfirm={() => remove.mutate({ userId, passkeyId: p.id }, { onError: failed('Not removed') })}
                />
              </Allowed>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  )
}
