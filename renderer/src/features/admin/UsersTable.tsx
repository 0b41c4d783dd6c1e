import { Badge, Checkbox, Group, Table, Text, UnstyledButton } from '@mantine/core'
import { IconChevronDown, IconChevronUp, IconSelector } from '@tabler/icons-react'
import type { ReactNode } from 'react'
import type { UserView } from '../../../../server/features/admin/panel-contract'
import { rowOpener } from '../../deep-link'
import { Ago } from '../../format'

/** Whether the user's email address is verified (the list and the drawer). */
export function VerifiedBadge({ verified }: { verified: boolean }) {
  return verified ? (
    <Badge color="teal" variant="light">
      verified
    </Badge>
  ) : (
    <Badge color="gray" variant="light">
      unverified
    </Badge>
  )
}

export interface Sort {
  by: string
  dir: 'asc' | 'desc'
}

function SortHeader({
  field,
  sort,
  onSort,
  children,
}: {
  field: string
  sort: Sort
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

/** One page of users: a checkbox each (and one for the page), sortable columns; a row opens the user's drawer. */
export function UsersTable({
  users,
  sort,
  onSort,
  checked,
  setChecked,
  onOpen,
}: {
  users: UserView[]
  sort: Sort
  onSort: (by: string) => void
  checked: string[]
  setChecked: (update: (current: string[]) => string[]) => void
  onOpen: (userId: string) => void
}) {
  return (
    <Table.ScrollContainer minWidth={800}>
      <Table highlightOnHover verticalSpacing="sm" data-testid="users-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={40}>
              <Checkbox
                aria-label="Select every user on this page"
                checked={users.length > 0 && users.every((u) => checked.includes(u.id))}
                indeterminate={users.some((u) => checked.includes(u.id)) && !users.every((u) => checked.includes(u.id))}
                onChange={(e) => {
                  const ids = users.map((u) => u.id)
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
          {users.map((u) => (
            <Table.Tr key={u.id} {...rowOpener(`${u.name} <${u.email}>: open`, () => onOpen(u.id))} data-testid={`user-row-${u.email}`}>
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
                  <VerifiedBadge verified={u.emailVerified} />
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
  )
}
