import { Badge, Button, Card, Code, Stack, Table, Text, TextInput } from '@mantine/core'
import { useDebouncedValue, useDisclosure } from '@mantine/hooks'
import { IconBuildingPlus, IconSearch } from '@tabler/icons-react'
import { useState } from 'react'
import { Allowed } from '../../access'
import { useOp } from '../../api'
import { ErrorNotice, Loading, PageHeader } from '../../components/common'
import { ListPagination } from '../../components/ListPagination'
import { rowOpener, useDeepLink } from '../../deep-link'
import { Ago } from '../../format'
import { ink } from '../../ink'
import { OrganizationDrawer } from './OrganizationDrawer'
import { CreateOrganization } from './OrganizationForms'

const PAGE = 25

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
        {list.data && <ListPagination total={list.data.total} pageSize={PAGE} page={page} onChange={setPage} label="Organization pages" />}
      </Card>
      <CreateOrganization opened={creating} onClose={close} />
      <OrganizationDrawer id={selected} onClose={closeOrg} />
    </Stack>
  )
}
