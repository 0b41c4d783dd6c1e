import { Alert, List, Loader, Text } from '@mantine/core'
import type { OpInput } from '../../../../server/panel/contract'
import { useOp } from '../../api'
import { ink } from '../../ink'

export interface NameImpactEntry {
  where: string
  name: string
  problem: string
}

/** The rules a change would leave naming nobody: where each is written, the name and why (the groups switches and the organization dialogs). */
export function NameImpactList({ entries }: { entries: NameImpactEntry[] }) {
  return (
    <List size="sm">
      {entries.map((entry) => (
        <List.Item key={`${entry.where} ${entry.name}`}>
          <Text span fw={500}>
            {entry.where}
          </Text>{' '}
          requires <code>{entry.name}</code>: {entry.problem}
        </List.Item>
      ))}
    </List>
  )
}

/**
 * Inside the dialog of a change to an organization or a team (delete, a new slug): what it would take
 * away, asked of the server (`groups.organizationImpact`) while the dialog is open (issue 50 §5).
 * Nothing shows when the change takes nothing away.
 */
export function OrganizationChangeImpact({ change }: { change: OpInput<'groups.organizationImpact'> }) {
  const impact = useOp('groups.organizationImpact', change)
  if (impact.isPending) return <Loader size="xs" aria-label="Checking what names this change takes away" />
  const entries = impact.data ?? []
  if (entries.length === 0) return null
  return (
    <Alert color="red" title="Rules name it" styles={{ title: { color: ink.danger } }} data-testid="org-change-impact">
      <Text size="sm" mb="xs">
        Nobody would hold these names any more, so what names them would let no one in. Change those first, or go ahead anyway.
      </Text>
      <NameImpactList entries={entries} />
    </Alert>
  )
}
