import { Button, Group, Select, Table, Text } from '@mantine/core'
import { IconUserPlus } from '@tabler/icons-react'
import { useState } from 'react'
import type { OpOutput } from '../../../../server/panel/contract'
import { Editable } from '../../access'
import { useOpMutation } from '../../api'
import { ConfirmButton, showFieldErrors } from '../../components/common'
import { done, failed } from '../../components/notify'
import { UserPicker } from '../../components/UserPicker'

export type OrganizationDetail = OpOutput<'orgs.get'>

function AddMember({ organizationId, roles }: { organizationId: string; roles: string[] }) {
  const add = useOpMutation('orgs.addMember')
  const [userId, setUserId] = useState<string | null>(null)
  const [role, setRole] = useState('member')
  const [errors, setErrors] = useState<Record<string, string>>({})
  return (
    <Group gap="xs" align="flex-end" data-testid="add-member">
      <div style={{ flex: 1 }}>
        <UserPicker
          size="xs"
          label="Add an existing user"
          value={userId}
          onChange={(v) => {
            setUserId(v)
            setErrors({})
          }}
          error={errors.userId ?? errors.email}
          testId="add-member-user"
        />
      </div>
      <Select
        size="xs"
        w={130}
        label="Role"
        data={roles}
        value={role}
        error={errors.role}
        onChange={(v) => {
          if (v) setRole(v)
          setErrors({})
        }}
        allowDeselect={false}
        data-testid="add-member-role"
      />
      <Button
        size="xs"
        leftSection={<IconUserPlus size={14} />}
        disabled={!userId}
        loading={add.isPending}
        data-testid="add-member-submit"
        onClick={() =>
          userId &&
          add.mutate(
            { organizationId, userId, role },
            {
              onSuccess: () => {
                setUserId(null)
                done('Member added')
              },
              onError: (e) =>
                showFieldErrors(
                  e,
                  (field, message) => setErrors((c) => ({ ...c, [field]: message })),
                  ['userId', 'email', 'role'],
                  'Not added',
                ),
            },
          )
        }
      >
        Add member
      </Button>
    </Group>
  )
}

/** The organization's members: add one, change a role, remove one. */
export function OrganizationMembers({ org }: { org: OrganizationDetail }) {
  const setRole = useOpMutation('orgs.updateMemberRole')
  const removeMember = useOpMutation('orgs.removeMember')
  return (
    <Editable op={['orgs.updateMemberRole', 'orgs.removeMember', 'orgs.addMember']}>
      <AddMember organizationId={org.organization.id} roles={org.roles} />
      <Table fz="sm" data-testid="org-members">
        <Table.Tbody>
          {org.members.map((m) => (
            <Table.Tr key={m.id}>
              <Table.Td>
                <Text size="sm">{m.user?.name}</Text>
                <Text size="xs" c="dimmed">
                  {m.user?.email}
                </Text>
              </Table.Td>
              <Table.Td w={160}>
                <Select
                  size="xs"
                  aria-label={`Role of ${m.user?.name ?? m.user?.email ?? m.userId}`}
                  data={[...new Set([...org.roles, m.role])]}
                  value={m.role}
                  allowDeselect={false}
                  onChange={(role) =>
                    role &&
                    setRole.mutate(
                      { organizationId: org.organization.id, memberId: m.id, role },
                      { onSuccess: () => done('Role changed'), onError: failed('Role not changed') },
                    )
                  }
                />
              </Table.Td>
              <Table.Td w={90}>
                <ConfirmButton
                  label="Remove"
                  title="Remove this member?"
                  message={`${m.user?.email ?? m.userId} loses access to ${org.organization.name}.`}
                  confirmLabel="Remove"
                  onConfirm={() =>
                    removeMember
                      .mutateAsync({ organizationId: org.organization.id, memberId: m.id })
                      .then(() => done('Member removed'), failed('Not removed'))
                  }
                />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Editable>
  )
}
