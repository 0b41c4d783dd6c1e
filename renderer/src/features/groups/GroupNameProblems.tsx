import { List, Text } from '@mantine/core'
import { useOp } from '../../api'
import { ink } from '../../ink'

/**
 * The group names a rule requires that nobody holds yet (the organization is reserved: only an
 * administrator can create it), or that name a team by its display name, shown beside the rule
 * (forward auth) or the SAML app that names them. `where` picks the rule's entries
 * (server/features/groups/claims.ts names them `forwardAuth.rules[0].subject.teams`, `SAML app "Wiki"`).
 */
export function GroupNameProblems({ where, testId }: { where: (at: string) => boolean; testId: string }) {
  const problems = useOp('groups.nameProblems', {})
  const mine = (problems.data ?? []).filter((p) => where(p.where))
  if (mine.length === 0) return null
  return (
    <List size="sm" spacing={2} data-testid={testId}>
      {mine.map((p) => (
        <List.Item key={`${p.where} ${p.name}`}>
          <Text size="sm" c={ink.danger} component="span">
            “{p.name}”: {p.problem}
          </Text>
        </List.Item>
      ))}
    </List>
  )
}
