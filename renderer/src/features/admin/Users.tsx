import { Button, Card, Checkbox, Group, Modal, PasswordInput, Select, Stack, Text, TextInput } from '@mantine/core'
import { useForm } from '@mantine/form'
import { useDebouncedValue, useDisclosure } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { IconBan, IconLogout, IconSearch, IconFileImport, IconUserPlus } from '@tabler/icons-react'
import { useState } from 'react'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { ListPagination } from '../../components/ListPagination'
import { ConfirmButton, ErrorNotice, Loading, PageHeader, showFieldErrors } from '../../components/common'
import { ImportUsers } from '../import/ImportUsers'
import { Allowed } from '../../access'
import { useDeepLink } from '../../deep-link'
import { done, failed } from '../../components/notify'
import { RolesInput } from './user-drawer/user-forms'
import { UserDrawer } from './user-drawer/UserDrawer'
import { type Sort, UsersTable } from './UsersTable'

const PAGE = 25

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

interface Query {
  search: string
  field: 'any' | 'email' | 'name'
  operator: 'contains' | 'starts_with' | 'ends_with'
  filter: string
}

/** The search (what, in which field, how it matches) and the filter above the list. */
function UserFilters({ query, setQuery }: { query: Query; setQuery: (patch: Partial<Query>) => void }) {
  const { search, field, operator, filter } = query
  return (
    <Card withBorder padding="md">
      <Group align="flex-end" gap="sm">
        <TextInput
          style={{ flex: 1, minWidth: 200 }}
          label="Search"
          leftSection={<IconSearch size={16} />}
          placeholder="Search users"
          value={search}
          onChange={(e) => setQuery({ search: e.currentTarget.value })}
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
          onChange={(v) => v && setQuery({ field: v as Query['field'] })}
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
          onChange={(v) => v && setQuery({ operator: v as Query['operator'] })}
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
          onChange={(v) => setQuery({ filter: v ?? 'all' })}
          allowDeselect={false}
        />
      </Group>
    </Card>
  )
}

export default function Users() {
  const [query, setQueryState] = useState<Query>({ search: '', field: 'any', operator: 'contains', filter: 'all' })
  const { search, field, operator, filter } = query
  const [sort, setSort] = useState<Sort>({ by: 'createdAt', dir: 'desc' })
  const [page, setPage] = useState(1)
  // A new search or filter starts at page 1 (a field or match change keeps the page, as before).
  const setQuery = (patch: Partial<Query>) => {
    setQueryState((q) => ({ ...q, ...patch }))
    if ('search' in patch || 'filter' in patch) setPage(1)
  }
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
      <UserFilters query={query} setQuery={setQuery} />
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
          <UsersTable users={list.data.users} sort={sort} onSort={onSort} checked={checked} setChecked={setChecked} onOpen={openUser} />
        )}
        {list.data && <ListPagination total={list.data.total} pageSize={PAGE} page={page} onChange={setPage} label="User pages" />}
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
