import { Badge, Button, Group, Select, Stack, Table, TextInput } from '@mantine/core'
import { IconMailPlus } from '@tabler/icons-react'
import { useState } from 'react'
import { Editable } from '../../access'
import { useOpMutation } from '../../api'
import { showFieldErrors } from '../../components/common'
import { done, failed } from '../../components/notify'
import { Ago } from '../../format'
import { ink } from '../../ink'
import type { OrganizationDetail } from './OrganizationMembers'

/** The form inviting someone by email with a role. */
function InviteForm({ org }: { org: OrganizationDetail }) {
  const invite = useOpMutation('orgs.invite')
  const [email, setEmail] = useState('')
  const [role, setRole] = useState('member')
  // Errors the server named a field for, shown beside that field (never guessed from the message).
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({})
  const setFieldError = (field: string, message: string) => setFieldErrors((current) => ({ ...current, [field]: message }))
  return (
    <Group gap="xs" align="flex-end">
      <TextInput
        size="xs"
        style={{ flex: 1 }}
        label="Invite email"
        value={email}
        error={fieldErrors.email}
        onChange={(e) => {
          setEmail(e.currentTarget.value)
          setFieldErrors({})
        }}
      />
      <Select
        size="xs"
        w={120}
        label="Role"
        data={org.roles}
        value={role}
        error={fieldErrors.role}
        onChange={(v) => {
          if (v) setRole(v)
          setFieldErrors({})
        }}
        allowDeselect={false}
      />
      <Button
        size="xs"
        leftSection={<IconMailPlus size={14} />}
        loading={invite.isPending}
        onClick={() =>
          invite.mutate(
            { organizationId: org.organization.id, email, role },
            {
              onSuccess: () => {
                setEmail('')
                done('Invitation sent')
              },
              onError: (e) => showFieldErrors(e, setFieldError, ['email', 'role'], 'Not invited'),
            },
          )
        }
      >
        Invite
      </Button>
    </Group>
  )
}

/** The organization's invitations: invite, and resend or cancel a pending one. */
export function OrganizationInvitations({ org }: { org: OrganizationDetail }) {
  const invite = useOpMutation('orgs.invite')
  const cancel = useOpMutation('orgs.cancelInvitation')
  const organizationId = org.organization.id
  return (
    <Editable op={['orgs.invite', 'orgs.cancelInvitation']}>
      <Stack gap="xs">
        <InviteForm org={org} />
        <Table fz="sm">
          <Table.Tbody>
            {org.invitations.map((i) => (
              <Table.Tr key={i.id}>
                <Table.Td>{i.email}</Table.Td>
                <Table.Td>{i.role}</Table.Td>
                <Table.Td>
                  <Badge variant="outline" color={i.status === 'pending' ? ink.info : i.status === 'accepted' ? ink.ok : ink.muted}>
                    {i.status}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  <Ago when={i.expiresAt} prefix="expires " />
                </Table.Td>
                <Table.Td>
                  {i.status === 'pending' && (
                    <Group gap={4} wrap="nowrap">
                      <Button
                        size="compact-xs"
                        variant="subtle"
                        onClick={() =>
                          invite.mutate(
                            { organizationId, email: i.email, role: i.role ?? 'member', resend: true },
                            { onSuccess: () => done('Invitation re-sent'), onError: failed('Not re-sent') },
                          )
                        }
                      >
                        Resend
                      </Button>
                      <Button
                        size="compact-xs"
                        variant="subtle"
                        color="red"
                        onClick={() =>
                          cancel.mutate(
                            { organizationId, invitationId: i.id },
                            { onSuccess: () => done('Invitation canceled'), onError: failed('Not canceled') },
                          )
                        }
                      >
                        Cancel
                      </Button>
                    </Group>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Stack>
    </Editable>
  )
}
