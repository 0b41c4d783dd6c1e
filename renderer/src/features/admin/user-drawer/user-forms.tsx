import { Button, Alert, Group, Modal, MultiSelect, NumberInput, PasswordInput, Stack, Text, TextInput, Textarea } from '@mantine/core'
import { useForm } from '@mantine/form'
import { useDisclosure } from '@mantine/hooks'
import { IconBan, IconKey, IconLock, IconLockOpen, IconPencil } from '@tabler/icons-react'
import { type ReactNode, useState } from 'react'
import type { UserView } from '../../../../../server/features/admin/panel-contract'
import { useOp, useOpMutation } from '../../../api'
import { showFieldErrors } from '../../../components/common'
import { FormDialogButton } from '../../../components/FormDialog'
import { dateTime } from '../../../format'
import { Allowed, useAccess } from '../../../access'
import { done, failed } from '../../../components/notify'

export function BanUser({ user }: { user: UserView }) {
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

export function SetPassword({ user }: { user: UserView }) {
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
export function RolesInput({
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

export function EditUser({ user }: { user: UserView }) {
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
    <FormDialogButton
      op="users.update"
      label="Edit"
      icon={<IconPencil size={14} />}
      testId="edit-user"
      title={`Edit ${user.email}`}
      onOpen={() => {
        form.setValues({ name: user.name, email: user.email })
        form.clearErrors()
      }}
      onSubmit={(close) =>
        form.onSubmit((values) => {
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
        })
      }
      saving={update.isPending}
      saveTestId="edit-save"
    >
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
    </FormDialogButton>
  )
}

export function Lockout({
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
