import { Badge, Button, Code, Divider, Group, Stack, Table } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { IconCircleCheck, IconMail, IconMailCheck, IconShieldLock, IconUserShield } from '@tabler/icons-react'
import { useState } from 'react'
import { parseRoleList } from '../../../../../server/core/access-control'
import type { UserView } from '../../../../../server/features/admin/panel-contract'
import type { OpOutput } from '../../../../../server/panel/contract'
import { useOp, useOpMutation } from '../../../api'
import { ConfirmButton, showFieldErrors } from '../../../components/common'
import { DetailDrawer } from '../../../components/DetailDrawer'
import { actorName } from '../../../audit-text'
import { dateTime } from '../../../format'
import { Allowed, useAccess } from '../../../access'
import { done, failed } from '../../../components/notify'
import { BanUser, EditUser, Lockout, RolesInput, SetPassword } from './user-forms'
import { UserTabs } from './UserTabs'
import { VerifiedBadge } from '../UsersTable'

type UserDetail = OpOutput<'users.get'>

/** Who banned the user and when, from the ban's audit entry. */
function BannedBy({ ban, people }: { ban: UserDetail['ban']; people: UserDetail['people'] }) {
  if (!ban) return <>Not recorded (the ban left no audit entry)</>
  const person = ban.byUserId ? people[ban.byUserId] : undefined
  const who = person
    ? `${person.name} <${person.email}>`
    : ban.byUserId
      ? `deleted user (${ban.byUserId.slice(0, 8)}…)`
      : ban.by
        ? actorName(ban.by)
        : 'unknown'

  return (
    <>
      {who}, {dateTime(ban.at)}
    </>
  )
}

/**
 * What the person has enrolled, at a glance (the Second factors tab has the detail): the
 * authenticator app, passkeys, backup codes left, app passwords and trusted browsers.
 */
function Enrolled({ userId }: { userId: string }) {
  const factors = useOp('twoFactor.userFactors', { userId })
  const appPasswords = useOp('appPasswords.list', { userId })
  if (!factors.data || !appPasswords.data) return <>{factors.error || appPasswords.error ? 'Not available' : '…'}</>
  const f = factors.data
  const parts = [
    `Authenticator app: ${f.totp === 'verified' ? 'on' : f.totp === 'pending' ? 'not confirmed' : 'off'}`,
    `Passkeys: ${f.passkeys.length}`,
    ...(f.backupCodesLeft !== null ? [`Backup codes left: ${f.backupCodesLeft}`] : []),
    `App passwords: ${appPasswords.data.appPasswords.length}`,
    `Trusted browsers: ${f.trustedDevices}`,
  ]
  return <>{parts.join(' · ')}</>
}

/** Who the user is: role, verification and ban badges, and the facts the list does not show. */
function UserFacts({ user, detail }: { user: UserView; detail: UserDetail }) {
  return (
    <>
      <Group gap="xs">
        <Badge variant="light">{user.role ?? 'user'}</Badge>
        <VerifiedBadge verified={user.emailVerified} />
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
              {detail.lastLoginMethod.stored
                ? (detail.lastLoginMethod.method ?? 'None recorded yet')
                : 'Not recorded (lastLoginMethod.storeInDatabase is off)'}
            </Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Enrolled</Table.Th>
            <Table.Td data-testid="user-enrolled">
              <Enrolled userId={user.id} />
            </Table.Td>
          </Table.Tr>
          {user.banned && (
            <Table.Tr>
              <Table.Th>Ban reason</Table.Th>
              <Table.Td>{user.banReason ?? 'No reason'}</Table.Td>
            </Table.Tr>
          )}
          {user.banned && (
            <Table.Tr>
              <Table.Th>Banned by</Table.Th>
              <Table.Td data-testid="banned-by">
                <BannedBy ban={detail.ban} people={detail.people} />
              </Table.Td>
            </Table.Tr>
          )}
        </Table.Tbody>
      </Table>
    </>
  )
}

/** What an admin may do to the user, each button shown to the roles allowed to use it. */
function UserActions({ user, onClose }: { user: UserView; onClose: () => void }) {
  const unban = useOpMutation('users.unban')
  const verify = useOpMutation('users.verifyEmail')
  const remove = useOpMutation('users.remove')
  const impersonate = useOpMutation('users.impersonationLink')
  const sendReset = useOpMutation('users.sendPasswordReset')
  const sendVerification = useOpMutation('users.sendVerification')
  const sendSetUpLink = useOpMutation('users.sendSetUpLink')
  return (
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
            onClick={() => unban.mutate({ userId: user.id }, { onSuccess: () => done('Ban lifted'), onError: failed('Not unbanned') })}
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
      <Allowed op="users.sendSetUpLink">
        <Button
          size="xs"
          variant="light"
          leftSection={<IconShieldLock size={14} />}
          loading={sendSetUpLink.isPending}
          data-testid="send-set-up-link"
          onClick={() =>
            sendSetUpLink.mutate(
              { userId: user.id },
              {
                onSuccess: () =>
                  done(`Set-up link mailed to ${user.email}: it signs them in and opens the two-factor set-up (one use, one hour)`),
                onError: failed('Not sent'),
              },
            )
          }
        >
          Send a set-up link
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
            onClick={() => verify.mutate({ userId: user.id }, { onSuccess: () => done('Email verified'), onError: failed('Not verified') })}
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
                  const write = navigator.clipboard ? navigator.clipboard.writeText(link.url) : Promise.reject(new Error('no clipboard'))
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
  )
}

/** The user's roles, edited as a list. */
function UserRoles({ user }: { user: UserView }) {
  const setRole = useOpMutation('users.setRole')
  const [roles, setRoles] = useState<string[] | null>(null)
  const [roleError, setRoleError] = useState<string | null>(null)
  const access = useAccess()
  return (
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
  )
}

export function UserDrawer({ userId, onClose }: { userId: string | null; onClose: () => void }) {
  const detail = useOp('users.get', { userId: userId ?? '' }, { enabled: Boolean(userId) })
  const user = detail.data?.user
  return (
    <DetailDrawer
      opened={Boolean(userId)}
      onClose={onClose}
      title={user ? user.email : 'User'}
      error={detail.error}
      loaded={Boolean(user && detail.data)}
    >
      {() =>
        user &&
        detail.data && (
          <Stack data-testid="user-drawer">
            <UserFacts user={user} detail={detail.data} />
            <Lockout userId={user.id} locks={detail.data.locks} />
            <UserActions user={user} onClose={onClose} />
            <UserRoles user={user} />
            <Divider />
            <UserTabs user={user} detail={detail.data} />
          </Stack>
        )
      }
    </DetailDrawer>
  )
}
