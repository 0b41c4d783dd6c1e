import { Alert, Code, Group, Stack, Tabs, Text } from '@mantine/core'
import { Allowed } from '../../access'
import { useOp, useOpMutation } from '../../api'
import { ConfirmButton } from '../../components/common'
import { DetailDrawer } from '../../components/DetailDrawer'
import { done, failed } from '../../components/notify'
import { dateTime } from '../../format'
import { ink } from '../../ink'
import { OrganizationChangeImpact } from '../groups/NameImpact'
import { OrganizationInvitations } from './OrganizationInvitations'
import { type OrganizationDetail, OrganizationMembers } from './OrganizationMembers'
import { RenameOrganization } from './OrganizationForms'
import { OrganizationTeams } from './OrganizationTeams'

/** The organization's slug and creation, with Rename and Delete. */
function OrganizationHeader({ org, onDeleted }: { org: OrganizationDetail; onDeleted: () => void }) {
  const removeOrg = useOpMutation('orgs.remove')
  const { organization, members } = org
  return (
    <>
      {organization.slugProblem && (
        <Alert color="red" title="This slug must be renamed" styles={{ title: { color: ink.danger } }} data-testid="org-slug-problem">
          {organization.slugProblem}. Use Rename to give it a slug of lower-case letters, digits and hyphens that is no role's name.
        </Alert>
      )}
      <Group gap="xs" justify="space-between">
        <Group gap="xs">
          <Code>{organization.slug}</Code>
          <Text size="sm" c="dimmed">
            created {dateTime(organization.createdAt)}
          </Text>
        </Group>
        <Group gap="xs">
          <RenameOrganization org={organization} />
          <Allowed op="orgs.remove">
            <ConfirmButton
              label="Delete"
              title={`Delete ${organization.name}?`}
              message={
                <>
                  {`${organization.name}, its ${members.length} membership${members.length === 1 ? '' : 's'}, teams and invitations are deleted. The users stay. This cannot be undone.`}
                  <OrganizationChangeImpact change={{ organizationId: organization.id, remove: true }} />
                </>
              }
              confirmLabel="Delete organization"
              loading={removeOrg.isPending}
              testId="org-delete"
              onConfirm={() =>
                removeOrg.mutateAsync({ organizationId: organization.id }).then(() => {
                  done(`${organization.name} deleted`)
                  onDeleted()
                }, failed('Not deleted'))
              }
            />
          </Allowed>
        </Group>
      </Group>
    </>
  )
}

/** An organization opened from the list: its members, teams and invitations. */
export function OrganizationDrawer({ id, onClose }: { id: string | null; onClose: () => void }) {
  const detail = useOp('orgs.get', { organizationId: id ?? '' }, { enabled: Boolean(id) })
  const org = detail.data
  return (
    <DetailDrawer
      opened={Boolean(id)}
      onClose={onClose}
      title={org?.organization.name ?? 'Organization'}
      error={detail.error}
      loaded={Boolean(org)}
    >
      {() =>
        org && (
          <Stack>
            <OrganizationHeader org={org} onDeleted={onClose} />
            <Tabs defaultValue="members">
              <Tabs.List>
                <Tabs.Tab value="members">Members ({org.members.length})</Tabs.Tab>
                <Tabs.Tab value="teams">Teams ({org.teams.length})</Tabs.Tab>
                <Tabs.Tab value="invitations">Invitations ({org.invitations.length})</Tabs.Tab>
              </Tabs.List>
              <Tabs.Panel value="members" pt="sm">
                <OrganizationMembers org={org} />
              </Tabs.Panel>
              <Tabs.Panel value="teams" pt="sm">
                <OrganizationTeams org={org} />
              </Tabs.Panel>
              <Tabs.Panel value="invitations" pt="sm">
                <OrganizationInvitations org={org} />
              </Tabs.Panel>
            </Tabs>
          </Stack>
        )
      }
    </DetailDrawer>
  )
}
