import { Badge, Button, Code, Group, Stack, Table, Tabs, Text, VisuallyHidden } from '@mantine/core'
import { IconLogout } from '@tabler/icons-react'
import type { UserView } from '../../../../../server/features/admin/panel-contract'
import type { OpOutput } from '../../../../../server/panel/contract'
import { useOpMutation } from '../../../api'
import { AuditTable } from '../../../components/AuditTable'
import { ConfirmButton } from '../../../components/common'
import { UserSecondFactors } from '../../two-factor/UserSecondFactors'
import { UserAppPasswords } from '../../app-passwords/UserAppPasswords'
import { UserConnectedApps } from '../../oidc-provider/UserConnectedApps'
import { Ago, dateTime } from '../../../format'
import { Allowed, useAccess } from '../../../access'
import { done, failed } from '../../../components/notify'

type UserDetail = OpOutput<'users.get'>

/** The user's device sessions, each revocable, and all at once. */
function SessionsPanel({ user, detail }: { user: UserView; detail: UserDetail }) {
  const revokeOne = useOpMutation('users.revokeSession')
  const revokeAll = useOpMutation('users.revokeSessions')
  const access = useAccess()
  return (
    <Tabs.Panel value="sessions" pt="sm">
      {!access.can('session:list') ? (
        <Text size="sm" c="dimmed" data-testid="sessions-not-allowed">
          Your role may not list sessions (it needs the session:list permission).
        </Text>
      ) : detail.sessions.length === 0 ? (
        <Text size="sm" c="dimmed">
          No active session.
        </Text>
      ) : (
        <Stack gap="xs">
          <Group justify="flex-end">
            <Allowed op="users.revokeSessions">
              <ConfirmButton
                label="Revoke all"
                leftSection={<IconLogout size={14} />}
                title="Revoke every session?"
                message="The user is signed out on every device."
                confirmLabel="Revoke all"
                testId="revoke-all"
                onConfirm={() => revokeAll.mutateAsync({ userId: user.id }).then(() => done('Sessions revoked'), failed('Not revoked'))}
              />
            </Allowed>
          </Group>
          <Table fz="sm" data-testid="sessions-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Device (IP / agent)</Table.Th>
                <Table.Th>Last seen</Table.Th>
                <Table.Th>Signed in</Table.Th>
                <Table.Th>Expires</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {detail.sessions.map((s) => (
                <Table.Tr key={s.id}>
                  <Table.Td>
                    <Text size="xs">{s.ipAddress || '—'}</Text>
                    <Text size="xs" c="dimmed" lineClamp={1}>
                      {s.userAgent}
                    </Text>
                    {s.impersonatedBy && (
                      <Badge size="xs" color="grape.9">
                        impersonation
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Ago when={s.updatedAt} />
                  </Table.Td>
                  <Table.Td>
                    <Ago when={s.createdAt} />
                  </Table.Td>
                  <Table.Td>{dateTime(s.expiresAt)}</Table.Td>
                  <Table.Td>
                    <Allowed op="users.revokeSession">
                      <Button
                        size="compact-xs"
                        variant="subtle"
                        color="red"
                        aria-label={`Revoke the session from ${s.userAgent || s.ipAddress || 'an unknown device'}`}
                        onClick={() =>
                          revokeOne.mutate(
                            { userId: user.id, sessionId: s.id },
                            { onSuccess: () => done('Session revoked'), onError: failed('Not revoked') },
                          )
                        }
                      >
                        Revoke
                      </Button>
                    </Allowed>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Stack>
      )}
    </Tabs.Panel>
  )
}

/** Sessions, accounts, organizations, audit trail, second factors and connected apps of one user. */
export function UserTabs({ user, detail }: { user: UserView; detail: UserDetail }) {
  return (
    <Tabs defaultValue="sessions">
      <Tabs.List>
        <Tabs.Tab value="sessions">Device sessions ({detail.sessions.length ?? 0})</Tabs.Tab>
        <Tabs.Tab value="accounts">Accounts ({detail.accounts.length ?? 0})</Tabs.Tab>
        <Tabs.Tab value="orgs">Organizations ({detail.memberships.length ?? 0})</Tabs.Tab>
        <Tabs.Tab value="audit">Audit trail</Tabs.Tab>
        <Tabs.Tab value="second-factors">Second factors</Tabs.Tab>
        <Tabs.Tab value="connected-apps">Connected apps</Tabs.Tab>
      </Tabs.List>
      <SessionsPanel user={user} detail={detail} />
      <Tabs.Panel value="accounts" pt="sm">
        <Table fz="sm">
          <Table.Tbody>
            {detail.accounts.map((a) => (
              <Table.Tr key={a.id}>
                <Table.Td>
                  <Badge variant="light">{a.providerId}</Badge>
                </Table.Td>
                <Table.Td>
                  <Code>{a.accountId}</Code>
                </Table.Td>
                <Table.Td>{a.scope ?? ''}</Table.Td>
                <Table.Td>{dateTime(a.createdAt)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Tabs.Panel>
      <Tabs.Panel value="orgs" pt="sm">
        {detail.memberships.length === 0 ? (
          <Text size="sm" c="dimmed">
            Not a member of any organization.
          </Text>
        ) : (
          <Table fz="sm">
            <Table.Tbody>
              {detail.memberships.map((m) => (
                <Table.Tr key={m.organizationId}>
                  <Table.Td>{m.name}</Table.Td>
                  <Table.Td>
                    <Code>{m.slug}</Code>
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="light">{m.role}</Badge>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Tabs.Panel>
      <Tabs.Panel value="audit" pt="sm">
        <AuditTable events={detail.audit ?? []} people={detail.people ?? {}} compact />
      </Tabs.Panel>
      <Tabs.Panel value="second-factors" pt="sm">
        {user && <UserSecondFactors userId={user.id} email={user.email} />}
        {user && <UserAppPasswords userId={user.id} email={user.email} />}
      </Tabs.Panel>
      <Tabs.Panel value="connected-apps" pt="sm">
        {user && <UserConnectedApps userId={user.id} email={user.email} />}
      </Tabs.Panel>
    </Tabs>
  )
}
