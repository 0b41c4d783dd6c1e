import {
  Badge,
  Button,
  Card,
  Checkbox,
  Code,
  Divider,
  Drawer,
  Alert,
  Group,
  Modal,
  MultiSelect,
  NumberInput,
  Pagination,
  PasswordInput,
  Select,
  Stack,
  Table,
  Tabs,
  Text,
  TextInput,
  Textarea,
  UnstyledButton,
  VisuallyHidden,
} from '@mantine/core'
import { useForm } from '@mantine/form'
import { useDebouncedValue, useDisclosure } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import {
  IconBan,
  IconChevronDown,
  IconChevronUp,
  IconCircleCheck,
  IconKey,
  IconLock,
  IconLockOpen,
  IconLogout,
  IconMail,
  IconMailCheck,
  IconPencil,
  IconSearch,
  IconSelector,
  IconFileImport,
  IconUserPlus,
  IconUserShield,
} from '@tabler/icons-react'
import { type ReactNode, useState } from 'react'
import { parseRoleList } from '../../../../server/core/access-control'
import type { UserView } from '../../../../server/features/admin/panel-contract'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { AuditTable } from '../../components/AuditTable'
import { ConfirmButton, ErrorNotice, Loading, PageHeader, showFieldErrors } from '../../components/common'
import { ImportUsers } from '../import/ImportUsers'
import { UserSecondFactors } from '../two-factor/UserSecondFactors'
import { UserAppPasswords } from '../app-passwords/UserAppPasswords'
import { UserConnectedApps } from '../oidc-provider/UserConnectedApps'
import { Ago, dateTime } from '../../format'
import { Allowed, useAccess } from '../../access'
import { rowOpener, useDeepLink } from '../../deep-link'

const PAGE = 25

function failed(title: string) {
  return (e: PanelCallError) => notifications.show({ color: 'red', title, message: e.message })
}
const done = (message: string) => notifications.show({ color: 'teal', title: 'Done', message })

const CREATE_FIELDS = ['name', 'email', 'password', 'role'] as const

function CreateUser({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const create = useOpMutation('users.create')
  const form = useForm({
    initialValues: { name: '', email: '', password: '', role: ['user'] as string[], emailVerified: false },
    validate: {
      name: (v) => (v.trim() ? null : 'Name is required'),
      email: (v) => (/^\S+@\S+\.\S+$/.test(v) ? null : 'Invalid email'),
      password: (v) => (v ? null : 'Password is required'),
    },
  })
  return (
    <Modal opened={opened} onClose={onClose} title="Create user" centered>
      <form
        onSubmit={form.onSubmit(async (values) => {
          try {
            const { user } = await create.mutateAsync({ ...values, role: values.role.length > 0 ? values.role.join(',') : undefined })
            done(`${user.email} can sign in now`)
            form.reset()
            onClose()
          } catch (e) {
            // The server names the field an error concerns: shown beside it, else as a notice.
            showFieldErrors(e as PanelCallError, form.setFieldError, CREATE_FIELDS, 'User not created')
          }
        })}
      >
        <Stack>
          <TextInput label="Name" required {...form.getInputProps('name')} data-testid="create-name" />
          <TextInput label="Email" required {...form.getInputProps('email')} data-testid="create-email" />
          <PasswordInput label="Password" required {...form.getInputProps('password')} data-testid="create-password" />
          <RolesInput
            label="Roles"
            value={form.values.role}
            onChange={(v) => form.setFieldValue('role', v)}
            error={form.errors.role}
            testId="create-role"
          />
          <Checkbox label="Email already verified" {...form.getInputProps('emailVerified', { type: 'checkbox' })} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending} data-testid="create-submit">
              Create user
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}

function BanUser({ user }: { user: UserView }) {
  const [opened, { open, close }] = useDisclosure(false)
  const ban = useOpMutation('users.ban')
  const [reason, setReason] = useState('')
  const [hours, setHours] = useState<number | ''>('')
  return (
    <>
      <Allowed op="users.ban">
        <Button size="xs" color="red" variant="light" leftSection={<IconBan size={14} />} onClick={open} data-testid="ban-user">
          Ban
        </Button>
      </Allowed>
      <Modal opened={opened} onClose={close} title={`Ban ${user.email}`} centered>
        <Stack>
          <Text size="sm">The user is signed out everywhere and cannot sign in until the ban ends or is lifted.</Text>
          <Textarea
            label="Reason"
            placeholder="No reason"
            value={reason}
            onChange={(e) => setReason(e.currentTarget.value)}
            data-testid="ban-reason"
          />
          <NumberInput
            label="Ends after (hours)"
            placeholder="Never"
            min={1}
            value={hours}
            onChange={(v) => setHours(typeof v === 'number' ? v : '')}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button
              color="red"
              loading={ban.isPending}
              data-testid="ban-confirm"
              onClick={() =>
                ban.mutate(
                  { userId: user.id, ...(reason ? { banReason: reason } : {}), ...(hours ? { banExpiresIn: hours * 3600 } : {}) },
                  {
                    onSuccess: () => {
                      done(`${user.email} is banned`)
                      close()
                    },
                    onError: failed('Not banned'),
                  },
                )
              }
            >
              Ban user
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  )
}

function SetPassword({ user }: { user: UserView }) {
  const [opened, { open, close }] = useDisclosure(false)
  const set = useOpMutation('users.setPassword')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<string | null>(null)
  return (
    <>
      <Allowed op="users.setPassword">
        <Button size="xs" variant="light" leftSection={<IconKey size={14} />} onClick={open}>
          Set password
        </Button>
      </Allowed>
      <Modal opened={opened} onClose={close} title={`New password for ${user.email}`} centered>
        <Stack>
          <PasswordInput label="New password" value={password} error={error} onChange={(e) => setPassword(e.currentTarget.value)} />
          <Group justify="flex-end">
            <Button
              loading={set.isPending}
              onClick={() =>
                set.mutate(
                  { userId: user.id, newPassword: password },
                  {
                    onSuccess: () => {
                      done('Password changed')
                      setPassword('')
                      close()
                    },
                    onError: (e) => {
                      setError(null)
                      showFieldErrors(e, (_, message) => setError(message), ['newPassword'], 'Password not set')
                    },
                  },
                )
              }
            >
              Set password
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  )
}

/** The roles this server defines (admin.roles and the built-in ones), to choose from. */
function RolesInput({
  label,
  value,
  onChange,
  error,
  testId,
  disabled,
}: {
  label: string
  value: string[]
  onChange: (roles: string[]) => void
  error?: ReactNode
  testId?: string
  disabled?: boolean
}) {
  const roles = useOp('users.roles', {})
  return (
    <MultiSelect
      label={label}
      data={[...new Set([...(roles.data?.roles ?? []), ...value])]}
      value={value}
      onChange={onChange}
      error={error}
      placeholder={value.length === 0 ? 'Default role' : undefined}
      disabled={disabled}
      data-testid={testId}
    />
  )
}

function EditUser({ user }: { user: UserView }) {
  const [opened, { open, close }] = useDisclosure(false)
  const update = useOpMutation('users.update')
  const access = useAccess()
  const form = useForm({
    initialValues: { name: user.name, email: user.email },
    validate: {
      name: (v) => (v.trim() ? null : 'Name is required'),
      email: (v) => (/^\S+@\S+\.\S+$/.test(v.trim()) ? null : 'Invalid email'),
    },
  })
  return (
    <>
      <Allowed op="users.update">
        <Button
          size="xs"
          variant="light"
          leftSection={<IconPencil size={14} />}
          onClick={() => {
            form.setValues({ name: user.name, email: user.email })
            form.clearErrors()
            open()
          }}
          data-testid="edit-user"
        >
          Edit
        </Button>
      </Allowed>
      <Modal opened={opened} onClose={close} title={`Edit ${user.email}`} centered>
        <form
          onSubmit={form.onSubmit((values) => {
            const name = values.name.trim()
            const email = values.email.trim()
            update.mutate(
              { userId: user.id, ...(name !== user.name ? { name } : {}), ...(email !== user.email ? { email } : {}) },
              {
                onSuccess: () => {
                  done('User saved')
                  close()
                },
                onError: (e) => showFieldErrors(e, form.setFieldError, ['name', 'email'], 'User not saved'),
              },
            )
          })}
        >
          <Stack>
            <TextInput label="Name" data-autofocus {...form.getInputProps('name')} data-testid="edit-name" />
            <TextInput
              label="Email"
              {...form.getInputProps('email')}
              disabled={!access.can('user:set-email')}
              description={access.can('user:set-email') ? undefined : 'Your role may not change email addresses'}
              data-testid="edit-email"
            />
            <Text size="xs" c="dimmed">
              A new email is not marked verified by this; send a verification mail afterwards if needed.
            </Text>
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button type="submit" loading={update.isPending} data-testid="edit-save">
                Save
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </>
  )
}

function Lockout({
  userId,
  locks,
}: {
  userId: string
  locks: Array<{ key: string; kind: string; failures: number; lockedUntil: number }>
}) {
  const unlock = useOpMutation('users.unlock')
  if (locks.length === 0) return null
  const until = Math.max(...locks.map((l) => l.lockedUntil))
  return (
    <Alert color="orange" icon={<IconLock size={16} />} title="Sign-in locked" data-testid="user-lockout">
      <Stack gap="xs">
        <Text size="sm">
          {locks
            .map((l) => `${l.kind === 'second-factor' ? 'Second-factor codes' : 'Passwords'}: ${l.failures} failed attempts`)
            .join('; ')}
          . Locked until {dateTime(until)}.
        </Text>
        <Group>
          <Allowed op="users.unlock">
            <Button
              size="xs"
              color="orange"
              leftSection={<IconLockOpen size={14} />}
              loading={unlock.isPending}
              data-testid="lift-lockout"
              onClick={() => unlock.mutate({ userId }, { onSuccess: () => done('Lock lifted'), onError: failed('Lock not lifted') })}
            >
              Lift lock
            </Button>
          </Allowed>
        </Group>
      </Stack>
    </Alert>
  )
}

function UserDrawer({ userId, onClose }: { userId: string | null; onClose: () => void }) {
  const detail = useOp('users.get', { userId: userId ?? '' }, { enabled: Boolean(userId) })
  const unban = useOpMutation('users.unban')
  const verify = useOpMutation('users.verifyEmail')
  const revokeOne = useOpMutation('users.revokeSession')
  const revokeAll = useOpMutation('users.revokeSessions')
  const remove = useOpMutation('users.remove')
  const setRole = useOpMutation('users.setRole')
  const impersonate = useOpMutation('users.impersonationLink')
  const sendReset = useOpMutation('users.sendPasswordReset')
  const sendVerification = useOpMutation('users.sendVerification')
  const [roles, setRoles] = useState<string[] | null>(null)
  const [roleError, setRoleError] = useState<string | null>(null)
  const user = detail.data?.user
  const access = useAccess()

  return (
    <Drawer opened={Boolean(userId)} onClose={onClose} position="right" size="xl" title={user ? user.email : 'User'}>
      <ErrorNotice error={detail.error} />
      {!user ? (
        !detail.error && <Loading />
      ) : (
        <Stack data-testid="user-drawer">
          <Group gap="xs">
            <Badge variant="light">{user.role ?? 'user'}</Badge>
            {user.emailVerified ? (
              <Badge color="teal" variant="light">
                verified
              </Badge>
            ) : (
              <Badge color="gray" variant="light">
                unverified
              </Badge>
            )}
            {user.banned && (
              <Badge color="red.9" data-testid="banned-badge">
                banned{user.banExpires ? ` until ${dateTime(user.banExpires)}` : ''}
              </Badge>
            )}
          </Group>
          <Table fz="sm" verticalSpacing={4}>
            <Table.Tbody>
              <Table.Tr>
                <Table.Th w={140}>Name</Table.Th>
                <Table.Td>{user.name}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Id</Table.Th>
                <Table.Td>
                  <Code>{user.id}</Code>
                </Table.Td>
              </Table.Tr>
              {user.username && (
                <Table.Tr>
                  <Table.Th>Username</Table.Th>
                  <Table.Td>{user.displayUsername ?? user.username}</Table.Td>
                </Table.Tr>
              )}
              <Table.Tr>
                <Table.Th>Created</Table.Th>
                <Table.Td>{dateTime(user.createdAt)}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Last sign-in method</Table.Th>
                <Table.Td data-testid="last-login-method">
                  {detail.data?.lastLoginMethod.stored
                    ? (detail.data.lastLoginMethod.method ?? 'None recorded yet')
                    : 'Not recorded (lastLoginMethod.storeInDatabase is off)'}
                </Table.Td>
              </Table.Tr>
              {user.banned && (
                <Table.Tr>
                  <Table.Th>Ban reason</Table.Th>
                  <Table.Td>{user.banReason ?? 'No reason'}</Table.Td>
                </Table.Tr>
              )}
            </Table.Tbody>
          </Table>
          <Lockout userId={user.id} locks={detail.data?.locks ?? []} />
          <Group gap="xs">
            <EditUser user={user} />
            {user.banned ? (
              <Allowed op="users.unban">
                <Button
                  size="xs"
                  variant="light"
                  color="teal"
                  leftSection={<IconCircleCheck size={14} />}
                  loading={unban.isPending}
                  onClick={() =>
                    unban.mutate({ userId: user.id }, { onSuccess: () => done('Ban lifted'), onError: failed('Not unbanned') })
                  }
                  data-testid="unban-user"
                >
                  Unban
                </Button>
              </Allowed>
            ) : (
              <BanUser user={user} />
            )}
            <SetPassword user={user} />
            <Allowed op="users.sendPasswordReset">
              <Button
                size="xs"
                variant="light"
                leftSection={<IconMail size={14} />}
                loading={sendReset.isPending}
                data-testid="send-reset"
                onClick={() =>
                  sendReset.mutate(
                    { userId: user.id },
                    { onSuccess: () => done(`Password-reset link mailed to ${user.email}`), onError: failed('Not sent') },
                  )
                }
              >
                Send password reset
              </Button>
            </Allowed>
            {!user.emailVerified && (
              <Allowed op="users.sendVerification">
                <Button
                  size="xs"
                  variant="light"
                  leftSection={<IconMail size={14} />}
                  loading={sendVerification.isPending}
                  data-testid="send-verification"
                  onClick={() =>
                    sendVerification.mutate(
                      { userId: user.id },
                      { onSuccess: () => done(`Verification link mailed to ${user.email}`), onError: failed('Not sent') },
                    )
                  }
                >
                  Send verification mail
                </Button>
              </Allowed>
            )}
            {!user.emailVerified && (
              <Allowed op="users.verifyEmail">
                <Button
                  size="xs"
                  variant="light"
                  leftSection={<IconMailCheck size={14} />}
                  onClick={() =>
                    verify.mutate({ userId: user.id }, { onSuccess: () => done('Email verified'), onError: failed('Not verified') })
                  }
                >
                  Mark email verified
                </Button>
              </Allowed>
            )}
            <Allowed op="users.impersonationLink">
              <Button
                size="xs"
                variant="light"
                leftSection={<IconUserShield size={14} />}
                loading={impersonate.isPending}
                onClick={() =>
                  impersonate.mutate(
                    { userId: user.id },
                    {
                      onSuccess: (link) => {
                        // "Copied" only once the clipboard took it; otherwise the link is shown to copy by hand.
                        const write = navigator.clipboard
                          ? navigator.clipboard.writeText(link.url)
                          : Promise.reject(new Error('no clipboard'))
                        write.then(
                          () =>
                            notifications.show({
                              color: 'teal',
                              title: 'Impersonation link copied',
                              message: `Valid until ${dateTime(link.expiresAt)}`,
                            }),
                          () =>
                            notifications.show({
                              color: 'yellow',
                              title: 'Impersonation link (not copied: the clipboard refused)',
                              message: `${link.url} (valid until ${dateTime(link.expiresAt)})`,
                              autoClose: false,
                            }),
                        )
                      },
                      onError: failed('No impersonation link'),
                    },
                  )
                }
              >
                Impersonation link
              </Button>
            </Allowed>
            <Allowed op="users.remove">
              <ConfirmButton
                label="Delete user"
                title="Delete this user?"
                message={`${user.email}, their sessions, accounts and memberships are deleted. This cannot be undone.`}
                confirmLabel="Delete"
                loading={remove.isPending}
                testId="remove-user"
                onConfirm={() => remove.mutateAsync({ userId: user.id }).then(onClose, failed('Not deleted'))}
              />
            </Allowed>
          </Group>
          <Group align="flex-end" gap="xs">
            <div style={{ flex: 1 }}>
              <RolesInput
                disabled={!access.may('users.setRole')}
                label="Roles"
                value={roles ?? parseRoleList(user.role ?? 'user')}
                onChange={(value) => {
                  setRoles(value)
                  setRoleError(null)
                }}
                error={roleError}
                testId="user-roles"
              />
            </div>
            <Allowed op="users.setRole">
              <Button
                variant="light"
                disabled={!roles || roles.length === 0}
                loading={setRole.isPending}
                onClick={() =>
                  roles &&
                  setRole.mutate(
                    { userId: user.id, role: roles },
                    {
                      onSuccess: () => {
                        setRoles(null)
                        done('Role saved')
                      },
                      onError: (e) => {
                        setRoleError(null)
                        showFieldErrors(e, (_, message) => setRoleError(message), ['role'], 'Role not saved')
                      },
                    },
                  )
                }
              >
                Save roles
              </Button>
            </Allowed>
          </Group>
          <Divider />
          <Tabs defaultValue="sessions">
            <Tabs.List>
              <Tabs.Tab value="sessions">Device sessions ({detail.data?.sessions.length ?? 0})</Tabs.Tab>
              <Tabs.Tab value="accounts">Accounts ({detail.data?.accounts.length ?? 0})</Tabs.Tab>
              <Tabs.Tab value="orgs">Organizations ({detail.data?.memberships.length ?? 0})</Tabs.Tab>
              <Tabs.Tab value="audit">Audit trail</Tabs.Tab>
              <Tabs.Tab value="second-factors">Second factors</Tabs.Tab>
              <Tabs.Tab value="connected-apps">Connected apps</Tabs.Tab>
            </Tabs.List>
            <Tabs.Panel value="sessions" pt="sm">
              {!access.can('session:list') ? (
                <Text size="sm" c="dimmed" data-testid="sessions-not-allowed">
                  Your role may not list sessions (it needs the session:list permission).
                </Text>
              ) : detail.data?.sessions.length === 0 ? (
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
                        onConfirm={() =>
                          revokeAll.mutateAsync({ userId: user.id }).then(() => done('Sessions revoked'), failed('Not revoked'))
                        }
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
                      {detail.data?.sessions.map((s) => (
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
            <Tabs.Panel value="accounts" pt="sm">
              <Table fz="sm">
                <Table.Tbody>
                  {detail.data?.accounts.map((a) => (
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
              {detail.data?.memberships.length === 0 ? (
                <Text size="sm" c="dimmed">
                  Not a member of any organization.
                </Text>
              ) : (
                <Table fz="sm">
                  <Table.Tbody>
                    {detail.data?.memberships.map((m) => (
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
              <AuditTable events={detail.data?.audit ?? []} people={detail.data?.people ?? {}} compact />
            </Tabs.Panel>
            <Tabs.Panel value="second-factors" pt="sm">
              {user && <UserSecondFactors userId={user.id} email={user.email} />}
              {user && <UserAppPasswords userId={user.id} email={user.email} />}
            </Tabs.Panel>
            <Tabs.Panel value="connected-apps" pt="sm">
              {user && <UserConnectedApps userId={user.id} email={user.email} />}
            </Tabs.Panel>
          </Tabs>
        </Stack>
      )}
    </Drawer>
  )
}

/** Actions on the selected users: each confirmed with the count, each user audited on its own. */
function BulkBar({ userIds, onDone }: { userIds: string[]; onDone: (left: string[]) => void }) {
  const bulk = useOpMutation('users.bulk')
  if (userIds.length === 0) return null
  const n = userIds.length
  const users = `${n} user${n === 1 ? '' : 's'}`
  const run = (action: 'ban' | 'revokeSessions' | 'remove', verb: string) =>
    bulk.mutateAsync({ action, userIds }).then(
      (outcome) => {
        if (outcome.failed.length === 0) done(`${verb}: ${outcome.done.length} user${outcome.done.length === 1 ? '' : 's'}`)
        else
          notifications.show({
            color: 'yellow',
            title: `${verb}: ${outcome.done.length} of ${n}`,
            message: outcome.failed.map((f) => `${f.userId}: ${f.message}`).join('; '),
            autoClose: false,
          })
        // Deleted users leave the selection; the others stay selected for a next action.
        onDone(action === 'remove' ? outcome.failed.map((f) => f.userId) : userIds)
      },
      failed(`${verb} failed`),
    )
  return (
    <Card withBorder padding="sm" data-testid="bulk-bar">
      <Group justify="space-between">
        <Text size="sm" fw={600} data-testid="bulk-count">
          {users} selected
        </Text>
        <Group gap="xs">
          <Allowed op="users.bulk" permission="user:ban">
            <ConfirmButton
              label="Ban"
              leftSection={<IconBan size={14} />}
              title={`Ban ${users}?`}
              message={`${users} are signed out everywhere and cannot sign in until unbanned.`}
              confirmLabel={`Ban ${users}`}
              loading={bulk.isPending}
              testId="bulk-ban"
              onConfirm={() => run('ban', 'Banned')}
            />
          </Allowed>
          <Allowed op="users.bulk" permission="session:revoke">
            <ConfirmButton
              label="Revoke sessions"
              leftSection={<IconLogout size={14} />}
              title={`Revoke the sessions of ${users}?`}
              message={`${users} are signed out on every device.`}
              confirmLabel={`Revoke sessions of ${users}`}
              loading={bulk.isPending}
              testId="bulk-revoke"
              onConfirm={() => run('revokeSessions', 'Sessions revoked')}
            />
          </Allowed>
          <Allowed op="users.bulk" permission="user:delete">
            <ConfirmButton
              label="Delete"
              title={`Delete ${users}?`}
              message={`${users}, their sessions, accounts and memberships are deleted. This cannot be undone.`}
              confirmLabel={`Delete ${users}`}
              loading={bulk.isPending}
              testId="bulk-delete"
              onConfirm={() => run('remove', 'Deleted')}
            />
          </Allowed>
          <Button size="xs" variant="default" onClick={() => onDone([])}>
            Clear selection
          </Button>
        </Group>
      </Group>
    </Card>
  )
}

function SortHeader({
  field,
  sort,
  onSort,
  children,
}: {
  field: string
  sort: { by: string; dir: 'asc' | 'desc' }
  onSort: (field: string) => void
  children: ReactNode
}) {
  const Icon = sort.by !== field ? IconSelector : sort.dir === 'asc' ? IconChevronUp : IconChevronDown
  return (
    <Table.Th>
      <UnstyledButton onClick={() => onSort(field)}>
        <Group gap={4} wrap="nowrap">
          <Text fw={600} size="sm">
            {children}
          </Text>
          <Icon size={14} />
        </Group>
      </UnstyledButton>
    </Table.Th>
  )
}

export default function Users() {
  const [search, setSearch] = useState('')
  const [field, setField] = useState<'any' | 'email' | 'name'>('any')
  const [operator, setOperator] = useState<'contains' | 'starts_with' | 'ends_with'>('contains')
  const [filter, setFilter] = useState<string>('all')
  const [sort, setSort] = useState<{ by: string; dir: 'asc' | 'desc' }>({ by: 'createdAt', dir: 'desc' })
  const [page, setPage] = useState(1)
  const [selected, openUser, closeUser] = useDeepLink('users')
  const [checked, setChecked] = useState<string[]>([])
  const [creating, { open, close }] = useDisclosure(false)
  const [importing, { open: openImport, close: closeImport }] = useDisclosure(false)
  const [debounced] = useDebouncedValue(search.trim(), 300)

  const filterInput =
    filter === 'banned'
      ? { filterField: 'banned', filterValue: true, filterOperator: 'eq' as const }
      : filter === 'admins'
        ? { filterField: 'role', filterValue: 'admin', filterOperator: 'contains' as const }
        : filter === 'anonymous' || filter === 'people'
          ? { filterField: 'isAnonymous', filterValue: true, filterOperator: filter === 'anonymous' ? ('eq' as const) : ('ne' as const) }
          : {}
  const list = useOp(
    'users.list',
    {
      ...(debounced ? { searchValue: debounced, searchField: field, ...(field === 'any' ? {} : { searchOperator: operator }) } : {}),
      ...filterInput,
      sortBy: sort.by,
      sortDirection: sort.dir,
      limit: PAGE,
      offset: (page - 1) * PAGE,
    },
    { placeholderData: (prev) => prev },
  )
  const onSort = (by: string) => setSort((s) => ({ by, dir: s.by === by && s.dir === 'asc' ? 'desc' : 'asc' }))

  return (
    <Stack>
      <PageHeader
        title="Users"
        description="Everyone who can sign in. Click a user for sessions, accounts, organizations and actions."
        actions={
          <>
            <Allowed op={['import.upload', 'import.start']}>
              <Button variant="default" leftSection={<IconFileImport size={16} />} onClick={openImport} data-testid="import-users">
                Import
              </Button>
            </Allowed>
            <Allowed op="users.create">
              <Button leftSection={<IconUserPlus size={16} />} onClick={open} data-testid="create-user">
                Create user
              </Button>
            </Allowed>
          </>
        }
      />
      <Card withBorder padding="md">
        <Group align="flex-end" gap="sm">
          <TextInput
            style={{ flex: 1, minWidth: 200 }}
            label="Search"
            leftSection={<IconSearch size={16} />}
            placeholder="Search users"
            value={search}
            onChange={(e) => {
              setSearch(e.currentTarget.value)
              setPage(1)
            }}
            data-testid="user-search"
          />
          <Select
            label="In"
            w={200}
            data={[
              { value: 'any', label: 'Name, email or username' },
              { value: 'email', label: 'email' },
              { value: 'name', label: 'name' },
            ]}
            value={field}
            onChange={(v) => v && setField(v as typeof field)}
            allowDeselect={false}
          />
          <Select
            label="Match"
            w={140}
            data={[
              { value: 'contains', label: 'contains' },
              { value: 'starts_with', label: 'starts with' },
              { value: 'ends_with', label: 'ends with' },
            ]}
            value={field === 'any' ? 'contains' : operator}
            disabled={field === 'any'}
            onChange={(v) => v && setOperator(v as typeof operator)}
            allowDeselect={false}
          />
          <Select
            label="Show"
            w={180}
            data-testid="user-filter"
            data={[
              { value: 'all', label: 'All users' },
              { value: 'banned', label: 'Banned' },
              { value: 'admins', label: 'Admins' },
              { value: 'people', label: 'Without anonymous' },
              { value: 'anonymous', label: 'Anonymous' },
            ]}
            value={filter}
            onChange={(v) => {
              setFilter(v ?? 'all')
              setPage(1)
            }}
            allowDeselect={false}
          />
        </Group>
      </Card>
      <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
      <BulkBar userIds={checked} onDone={(left) => setChecked(left)} />
      <Card withBorder padding="md">
        {!list.data ? (
          !list.error && <Loading />
        ) : list.data.users.length === 0 ? (
          <Text c="dimmed" size="sm" ta="center" p="lg">
            {debounced || filter !== 'all' ? 'No user matches.' : 'No users yet. Create one, or let people sign up through your app.'}
          </Text>
        ) : (
          <Table.ScrollContainer minWidth={800}>
            <Table highlightOnHover verticalSpacing="sm" data-testid="users-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th w={40}>
                    <Checkbox
                      aria-label="Select every user on this page"
                      checked={list.data.users.length > 0 && list.data.users.every((u) => checked.includes(u.id))}
                      indeterminate={
                        list.data.users.some((u) => checked.includes(u.id)) && !list.data.users.every((u) => checked.includes(u.id))
                      }
                      onChange={(e) => {
                        const ids = list.data?.users.map((u) => u.id) ?? []
                        setChecked((c) => (e.currentTarget.checked ? [...new Set([...c, ...ids])] : c.filter((id) => !ids.includes(id))))
                      }}
                      data-testid="select-page"
                    />
                  </Table.Th>
                  <SortHeader field="name" sort={sort} onSort={onSort}>
                    Name
                  </SortHeader>
                  <SortHeader field="email" sort={sort} onSort={onSort}>
                    Email
                  </SortHeader>
                  <SortHeader field="role" sort={sort} onSort={onSort}>
                    Role
                  </SortHeader>
                  <Table.Th>Status</Table.Th>
                  <SortHeader field="createdAt" sort={sort} onSort={onSort}>
                    Created
                  </SortHeader>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.data.users.map((u) => (
                  <Table.Tr
                    key={u.id}
                    {...rowOpener(`${u.name} <${u.email}>: open`, () => openUser(u.id))}
                    data-testid={`user-row-${u.email}`}
                  >
                    <Table.Td onClick={(e) => e.stopPropagation()}>
                      <Checkbox
                        aria-label={`Select ${u.email}`}
                        checked={checked.includes(u.id)}
                        onChange={(e) => {
                          const on = e.currentTarget.checked
                          setChecked((c) => (on ? [...c, u.id] : c.filter((id) => id !== u.id)))
                        }}
                        data-testid={`select-${u.email}`}
                      />
                    </Table.Td>
                    <Table.Td>{u.name}</Table.Td>
                    <Table.Td>{u.email}</Table.Td>
                    <Table.Td>
                      <Badge variant="light">{u.role ?? 'user'}</Badge>
                    </Table.Td>
                    <Table.Td>
                      <Group gap={4}>
                        {u.banned && <Badge color="red.9">banned</Badge>}
                        {u.isAnonymous && (
                          <Badge color="grape" variant="light" data-testid="anonymous-badge">
                            anonymous
                          </Badge>
                        )}
                        {u.emailVerified ? (
                          <Badge color="teal" variant="light">
                            verified
                          </Badge>
                        ) : (
                          <Badge color="gray" variant="light">
                            unverified
                          </Badge>
                        )}
                      </Group>
                    </Table.Td>
                    <Table.Td>
                      <Ago when={u.createdAt} />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        {list.data && list.data.total > PAGE && (
          <Group justify="flex-end" mt="sm">
            <Pagination
              total={Math.ceil(list.data.total / PAGE)}
              value={page}
              onChange={setPage}
              size="sm"
              aria-label="User pages"
              getControlProps={(control) => ({ 'aria-label': `${control[0]?.toUpperCase()}${control.slice(1)} page` })}
              getItemProps={(n) => ({ 'aria-label': `Page ${n}` })}
            />
          </Group>
        )}
        {list.data && (
          <Text size="xs" c="dimmed" mt="xs" data-testid="users-total">
            {list.data.total} user{list.data.total === 1 ? '' : 's'}
          </Text>
        )}
      </Card>
      <CreateUser opened={creating} onClose={close} />
      <ImportUsers opened={importing} onClose={closeImport} />
      <UserDrawer userId={selected} onClose={closeUser} />
    </Stack>
  )
}
