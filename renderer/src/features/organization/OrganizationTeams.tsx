import { Button, Group, Modal, MultiSelect, Stack, Text, TextInput } from '@mantine/core'
import { IconPlus } from '@tabler/icons-react'
import { useRef, useState } from 'react'
import { Editable } from '../../access'
import { call, useOpMutation } from '../../api'
import { ConfirmButton, showFieldErrors } from '../../components/common'
import { done, failed } from '../../components/notify'
import { type NameImpactEntry, NameImpactList, OrganizationChangeImpact } from '../groups/NameImpact'
import type { OrganizationDetail } from './OrganizationMembers'

/** One team: its name (renamed on leaving the field), its members, remove. */
function TeamRow({ org, team }: { org: OrganizationDetail; team: OrganizationDetail['teams'][number] }) {
  const renameTeam = useOpMutation('orgs.renameTeam')
  const removeTeam = useOpMutation('orgs.removeTeam')
  const setTeamMembers = useOpMutation('orgs.setTeamMembers')
  const organizationId = org.organization.id
  const field = useRef<HTMLInputElement>(null)
  // A new name whose slug differs first asks what it takes away (issue 50 §5); with rules naming the team, the admin decides.
  const [pending, setPending] = useState<{ name: string; impact: NameImpactEntry[] } | null>(null)
  const rename = (name: string) =>
    renameTeam.mutate({ organizationId, teamId: team.id, name }, { onSuccess: () => done('Team renamed'), onError: failed('Not renamed') })
  const keepName = () => {
    if (field.current) field.current.value = team.name
    setPending(null)
  }
  return (
    <Group gap="xs" wrap="nowrap">
      <TextInput
        ref={field}
        style={{ flex: 1 }}
        size="xs"
        defaultValue={team.name}
        aria-label={`Team ${team.name}`}
        onBlur={(e) => {
          const name = e.currentTarget.value.trim()
          if (!name || name === team.name) return
          void call('groups.organizationImpact', { organizationId, teamId: team.id, teamName: name }).then(
            (impact) => (impact.length ? setPending({ name, impact }) : rename(name)),
            () => rename(name),
          )
        }}
      />
      <Modal opened={pending !== null} onClose={keepName} title={`Rename ${team.name}?`} data-testid="team-rename-impact">
        <Stack>
          <Text size="sm">
            Nobody would hold these group names any more, so what names them would let no one in. Change those first, or rename anyway.
          </Text>
          <NameImpactList entries={pending?.impact ?? []} />
          <Group justify="flex-end">
            <Button variant="default" onClick={keepName}>
              Keep the name
            </Button>
            <Button
              color="red"
              onClick={() => {
                if (pending) rename(pending.name)
                setPending(null)
              }}
              data-testid="team-rename-confirm"
            >
              Rename anyway
            </Button>
          </Group>
        </Stack>
      </Modal>
      <MultiSelect
        style={{ flex: 2 }}
        size="xs"
        aria-label={`Members of ${team.name}`}
        placeholder="No member"
        searchable
        data={org.members.map((m) => ({ value: m.userId, label: m.user?.email ?? m.userId }))}
        value={org.teamMembers.filter((tm) => tm.teamId === team.id).map((tm) => tm.userId)}
        onChange={(userIds) =>
          setTeamMembers.mutate(
            { organizationId, teamId: team.id, userIds },
            { onSuccess: () => done('Team members saved'), onError: failed('Team members not saved') },
          )
        }
        data-testid={`team-members-${team.name}`}
      />
      <ConfirmButton
        label="Remove"
        title="Remove this team?"
        message={
          <>
            {`Members of ${team.name} stay in the organization.`}
            <OrganizationChangeImpact change={{ organizationId, teamId: team.id, remove: true }} />
          </>
        }
        confirmLabel="Remove"
        onConfirm={() =>
          removeTeam.mutateAsync({ organizationId, teamId: team.id }).then(() => done('Team removed'), failed('Not removed'))
        }
      />
    </Group>
  )
}

/** The organization's teams, and a field adding one. */
export function OrganizationTeams({ org }: { org: OrganizationDetail }) {
  const createTeam = useOpMutation('orgs.createTeam')
  const [teamName, setTeamName] = useState('')
  // An error the server named a field for, shown beside that field (never guessed from the message).
  const [nameError, setNameError] = useState<string | null>(null)
  return (
    <Editable op={['orgs.createTeam', 'orgs.renameTeam', 'orgs.removeTeam', 'orgs.setTeamMembers']}>
      <Stack gap="xs">
        {org.teams.length === 0 && (
          <Text size="sm" c="dimmed">
            No team yet.
          </Text>
        )}
        {org.teams.map((t) => (
          <TeamRow key={t.id} org={org} team={t} />
        ))}
        <Group gap="xs">
          <TextInput
            size="xs"
            style={{ flex: 1 }}
            placeholder="New team name"
            aria-label="New team name"
            value={teamName}
            error={nameError}
            onChange={(e) => {
              setTeamName(e.currentTarget.value)
              setNameError(null)
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
                  onError: (e) => showFieldErrors(e, (_, message) => setNameError(message), ['teamName', 'name'], 'Team not created'),
                },
              )
            }
          >
            Add team
          </Button>
        </Group>
      </Stack>
    </Editable>
  )
}
