import {
  Alert,
  Badge,
  Button,
  Card,
  Code,
  Drawer,
  Group,
  Modal,
  MultiSelect,
  Pagination,
  Select,
  Stack,
  Table,
  Tabs,
  Text,
  TextInput,
} from '@mantine/core'
import { useForm } from '@mantine/form'
import { useDebouncedValue, useDisclosure } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { IconBuildingPlus, IconMailPlus, IconPencil, IconPlus, IconSearch, IconUserPlus } from '@tabler/icons-react'
import { useState } from 'react'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { ConfirmButton, ErrorNotice, Loading, PageHeader, showFieldErrors } from '../../components/common'
import { Allowed, Editable } from '../../access'
import { UserPicker } from '../../components/UserPicker'
import { rowOpener, useDeepLink } from '../../deep-link'
import { Ago, dateTime } from '../../format'
import type { OrganizationView } from '../../../../server/features/organization/panel-contract'
import { ink } from '../../ink'

const PAGE = 25
const failed = (title: string) => (e: PanelCallError) => notifications.show({ color: 'red', title, message: e.message })
const done = (message: string) => notifications.show({ color: 'teal', title: 'Done', message })

function CreateOrganization({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const create = useOpMutation('orgs.create')
  const form = useForm({
    initialValues: { name: '', slug: '', ownerUserId: '' },
    validate: {
      name: (v) => (v.trim() ? null : 'Name is required'),
      slug: (v) => (/^[a-z0-9-]+$/.test(v) ? null : 'Lowercase letters, digits and dashes'),
      ownerUserId: (v) => (v ? null : 'Choose the owner'),
    },
  })
  return (
    <Modal opened={opened} onClose={onClose} title="Create organization" centered>
      <form
        onSubmit={form.onSubmit((values) =>
          create.mutate(values, {
            onSuccess: () => {
              done(`${values.name} created`)
              form.reset()
              onClose()
            },
            onError: (e) => showFieldErrors(e, form.setFieldError, ['name', 'slug', 'ownerUserId'], 'Not created'),
          }),
        )}
      >
        <Stack>
          <TextInput
            label="Name"
            {...form.getInputProps('name')}
            onChange={(e) => {
              const name = e.currentTarget.value
              form.setFieldValue('name', name)
              if (!form.isTouched('slug'))
                form.setFieldValue(
                  'slug',
                  name
                    .toLowerCase()
                    .replace(/[^a-z0-9]+/g, '-')
                    .replace(/^-|-$/g, ''),
                )
            }}
          />
          <TextInput label="Slug" {...form.getInputProps('slug')} />
          <UserPicker
            label="Owner"
            testId="org-owner"
            value={form.values.ownerUserId || null}
            onChange={(v) => form.setFieldValue('ownerUserId', v ?? '')}
            error={form.errors.ownerUserId as string | undefined}
          />
          <Group justify="flex-end">
            <Button type="submit" loading={create.isPending}>
              Create
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}

function RenameOrganization({ org }: { org: OrganizationView }) {
  const [opened, { open, close }] = useDisclosure(false)
  const update = useOpMutation('orgs.update')
  const form = useForm({
    initialValues: { name: org.name, slug: org.slug },
    validate: {
      name: (v) => (v.trim() ? null : 'Name is required'),
      slug: (v) => (/^[a-z0-9-]+$/.test(v) ? null : 'Lowercase letters, digits and dashes'),
    },
  })
  return (
    <>
      <Allowed op="orgs.update">
        <Button
          size="xs"
          variant="light"
          leftSection={<IconPencil size={14} />}
          onClick={() => {
            form.setValues({ name: org.name, slug: org.slug })
            open()
          }}
          data-testid="org-rename"
        >
          Rename
        </Button>
      </Allowed>
      <Modal opened={opened} onClose={close} title={`Rename ${org.name}`} centered>
        <form
          onSubmit={form.onSubmit((values) =>
            update.mutate(
              { organizationId: org.id, name: values.name.trim(), slug: values.slug },
              {
                onSuccess: () => {
                  done('Organization renamed')
                  close()
                },
                onError: (e) => showFieldErrors(e, form.setFieldError, ['name', 'slug'], 'Not renamed'),
              },
            ),
          )}
        >
          <Stack>
            <TextInput label="Name" data-autofocus {...form.getInputProps('name')} data-testid="org-rename-name" />
            <TextInput label="Slug" {...form.getInputProps('slug')} data-testid="org-rename-slug" />
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button type="submit" loading={update.isPending} data-testid="org-rename-save">
                Save
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </>
  )
}

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

function OrganizationDrawer({ id, onClose }: { id: string | null; onClose: () => void }) {
  const detail = useOp('orgs.get', { organizationId: id ?? '' }, { enabled: Boolean(id) })
  const setRole = useOpMutation('orgs.updateMemberRole')
  const removeMember = useOpMutation('orgs.removeMember')
  const createTeam = useOpMutation('orgs.createTeam')
  const renameTeam = useOpMutation('orgs.renameTeam')
  const removeTeam = useOpMutation('orgs.removeTeam')
  const invite = useOpMutation('orgs.invite')
  const cancel = useOpMutation('orgs.cancelInvitation')
  const removeOrg = useOpMutation('orgs.remove')
  const setTeamMembers = useOpMutation('orgs.setTeamMembers')
  const [teamName, setTeamName] = useState('')
  const [inviteEmail, setInviteEmail] = useState('')
  const [inviteRole, setInviteRole] = useState('member')
  // Errors the server named a field for, shown beside that field (never guessed from the message).
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({})
  const setFieldError = (field: string, message: string) => setFieldErrors((current) => ({ ...current, [field]: message }))
  const clearFieldErrors = () => setFieldErrors({})
  const org = detail.data
  return (
    <Drawer opened={Boolean(id)} onClose={onClose} position="right" size="xl" title={org?.organization.name ?? 'Organization'}>
      <ErrorNotice error={detail.error} />
      {!org ? (
        !detail.error && <Loading />
      ) : (
        <Stack>
          {org.organization.slugProblem && (
            <Alert color="red" title="This slug must be renamed" styles={{ title: { color: ink.danger } }} data-testid="org-slug-problem">
              {org.organization.slugProblem}. Use Rename to give it a slug of lower-case letters, digits and hyphens that is no role's name.
            </Alert>
          )}
          <Group gap="xs" justify="space-between">
            <Group gap="xs">
              <Code>{org.organization.slug}</Code>
              <Text size="sm" c="dimmed">
                created {dateTime(org.organization.createdAt)}
              </Text>
            </Group>
            <Group gap="xs">
              <RenameOrganization org={org.organization} />
              <Allowed op="orgs.remove">
                <ConfirmButton
                  label="Delete"
                  title={`Delete ${org.organization.name}?`}
                  message={`${org.organization.name}, its ${org.members.length} membership${org.members.length === 1 ? '' : 's'}, teams and invitations are deleted. The users stay. This cannot be undone.`}
                  confirmLabel="Delete organization"
                  loading={removeOrg.isPending}
                  testId="org-delete"
                  onConfirm={() =>
                    removeOrg.mutateAsync({ organizationId: org.organization.id }).then(() => {
                      done(`${org.organization.name} deleted`)
                      onClose()
                    }, failed('Not deleted'))
                  }
                />
              </Allowed>
            </Group>
          </Group>
          <Tabs defaultValue="members">
            <Tabs.List>
              <Tabs.Tab value="members">Members ({org.members.length})</Tabs.Tab>
              <Tabs.Tab value="teams">Teams ({org.teams.length})</Tabs.Tab>
              <Tabs.Tab value="invitations">Invitations ({org.invitations.length})</Tabs.Tab>
            </Tabs.List>
            <Tabs.Panel value="members" pt="sm">
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
            </Tabs.Panel>
            <Tabs.Panel value="teams" pt="sm">
              <Editable op={['orgs.createTeam', 'orgs.renameTeam', 'orgs.removeTeam', 'orgs.setTeamMembers']}>
                <Stack gap="xs">
                  {org.teams.length === 0 && (
                    <Text size="sm" c="dimmed">
                      No team yet.
                    </Text>
                  )}
                  {org.teams.map((t) => (
                    <Group key={t.id} gap="xs" wrap="nowrap">
                      <TextInput
                        style={{ flex: 1 }}
                        size="xs"
                        defaultValue={t.name}
                        aria-label={`Team ${t.name}`}
                        onBlur={(e) => {
                          const name = e.currentTarget.value.trim()
                          if (name && name !== t.name)
                            renameTeam.mutate(
                              { organizationId: org.organization.id, teamId: t.id, name },
                              { onSuccess: () => done('Team renamed'), onError: failed('Not renamed') },
                            )
                        }}
                      />
                      <MultiSelect
                        style={{ flex: 2 }}
                        size="xs"
                        aria-label={`Members of ${t.name}`}
                        placeholder="No member"
                        searchable
                        data={org.members.map((m) => ({ value: m.userId, label: m.user?.email ?? m.userId }))}
                        value={org.teamMembers.filter((tm) => tm.teamId === t.id).map((tm) => tm.userId)}
                        onChange={(userIds) =>
                          setTeamMembers.mutate(
                            { organizationId: org.organization.id, teamId: t.id, userIds },
                            { onSuccess: () => done('Team members saved'), onError: failed('Team members not saved') },
                          )
                        }
                        data-testid={`team-members-${t.name}`}
                      />
                      <ConfirmButton
                        label="Remove"
                        title="Remove this team?"
                        message={`Members of ${t.name} stay in the organization.`}
                        confirmLabel="Remove"
                        onConfirm={() =>
                          removeTeam
                            .mutateAsync({ organizationId: org.organization.id, teamId: t.id })
                            .then(() => done('Team removed'), failed('Not removed'))
                        }
                      />
                    </Group>
                  ))}
                  <Group gap="xs">
                    <TextInput
                      size="xs"
                      style={{ flex: 1 }}
                      placeholder="New team name"
                      aria-label="New team name"
                      value={teamName}
                      error={fieldErrors.teamName}
                      onChange={(e) => {
                        setTeamName(e.currentTarget.value)
                        clearFieldErrors()
                      }}
                    />
                    <Button
                      size="xs"
                      variant="light"
                      leftSection={<IconPlus size={14} />}
                      disabled={!teamName.trim()}
                      onClick={() =>
                        createTeam.mutate(
                          { organizationId: org.organization.id, name: teamName.trim() },
                          {
                            onSuccess: () => {
                              setTeamName('')
                              done('Team created')
                            },
                            onError: (e) =>
                              showFieldErrors(
                                e,
                                (field, message) => setFieldError(field === 'name' ? 'teamName' : field, message),
                                ['teamName', 'name'],
                                'Team not created',
                              ),
                          },
                        )
                      }
                    >
                      Add team
                    </Button>
                  </Group>
                </Stack>
              </Editable>
            </Tabs.Panel>
            <Tabs.Panel value="invitations" pt="sm">
              <Editable op={['orgs.invite', 'orgs.cancelInvitation']}>
                <Stack gap="xs">
                  <Group gap="xs" align="flex-end">
                    <TextInput
                      size="xs"
                      style={{ flex: 1 }}
                      label="Invite email"
                      value={inviteEmail}
                      error={fieldErrors.email}
                      onChange={(e) => {
                        setInviteEmail(e.currentTarget.value)
                        clearFieldErrors()
                      }}
                    />
                    <Select
                      size="xs"
                      w={120}
                      label="Role"
                      data={org.roles}
                      value={inviteRole}
                      error={fieldErrors.role}
                      onChange={(v) => {
                        if (v) setInviteRole(v)
                        clearFieldErrors()
                      }}
                      allowDeselect={false}
                    />
                    <Button
                      size="xs"
                      leftSection={<IconMailPlus size={14} />}
                      loading={invite.isPending}
                      onClick={() =>
                        invite.mutate(
                          { organizationId: org.organization.id, email: inviteEmail, role: inviteRole },
                          {
                            onSuccess: () => {
                              setInviteEmail('')
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
                  <Table fz="sm">
                    <Table.Tbody>
                      {org.invitations.map((i) => (
                        <Table.Tr key={i.id}>
                          <Table.Td>{i.email}</Table.Td>
                          <Table.Td>{i.role}</Table.Td>
                          <Table.Td>
                            <Badge
                              variant="outline"
                              color={i.status === 'pending' ? ink.info : i.status === 'accepted' ? ink.ok : ink.muted}
                            >
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
                                      { organizationId: org.organization.id, email: i.email, role: i.role ?? 'member', resend: true },
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
                                      { organizationId: org.organization.id, invitationId: i.id },
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
            </Tabs.Panel>
          </Tabs>
        </Stack>
      )}
    </Drawer>
  )
}

export default function Organizations() {
  const [search, setSearch] = useState('')
  const [page, setPage] = useState(1)
  const [selected, openOrg, closeOrg] = useDeepLink('organizations')
  const [creating, { open, close }] = useDisclosure(false)
  const [debounced] = useDebouncedValue(search.trim(), 300)
  const list = useOp(
    'orgs.list',
    { ...(debounced ? { search: debounced } : {}), limit: PAGE, offset: (page - 1) * PAGE },
    { placeholderData: (prev) => prev },
  )
  return (
    <Stack>
      <PageHeader
        title="Organizations"
        description="Organizations with their members, teams and invitations."
        actions={
          <Allowed op="orgs.create">
            <Button leftSection={<IconBuildingPlus size={16} />} onClick={open}>
              Create organization
            </Button>
          </Allowed>
        }
      />
      <TextInput
        leftSection={<IconSearch size={16} />}
        placeholder="Search by name or slug"
        value={search}
        onChange={(e) => {
          setSearch(e.currentTarget.value)
          setPage(1)
        }}
      />
      <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
      <Card withBorder padding="md">
        {!list.data ? (
          !list.error && <Loading />
        ) : list.data.organizations.length === 0 ? (
          <Text c="dimmed" size="sm" ta="center" p="lg">
            {debounced ? 'No organization matches.' : 'No organizations yet. Users create them through your app, or create one here.'}
          </Text>
        ) : (
          <Table highlightOnHover verticalSpacing="sm" data-testid="orgs-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Slug</Table.Th>
                <Table.Th>Members</Table.Th>
                <Table.Th>Created</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.data.organizations.map((o) => (
                <Table.Tr key={o.id} {...rowOpener(`${o.name}: open`, () => openOrg(o.id))} data-testid={`org-row-${o.slug}`}>
                  <Table.Td>{o.name}</Table.Td>
                  <Table.Td>
                    <Code>{o.slug}</Code>
                    {o.slugProblem && (
                      <Badge ml="xs" color={ink.danger} variant="outline" title={o.slugProblem} data-testid={`org-slug-problem-${o.id}`}>
                        rename: not a valid slug
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td>{o.members}</Table.Td>
                  <Table.Td>
                    <Ago when={o.createdAt} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
        {list.data && list.data.total > PAGE && (
          <Group justify="flex-end" mt="sm">
            <Pagination
              total={Math.ceil(list.data.total / PAGE)}
              value={page}
              onChange={setPage}
              size="sm"
              aria-label="Organization pages"
              getControlProps={(control) => ({ 'aria-label': `${control[0]?.toUpperCase()}${control.slice(1)} page` })}
              getItemProps={(n) => ({ 'aria-label': `Page ${n}` })}
            />
          </Group>
        )}
      </Card>
      <CreateOrganization opened={creating} onClose={close} />
      <OrganizationDrawer id={selected} onClose={closeOrg} />
    </Stack>
  )
}
