import { Card, Stack, Title } from '@mantine/core'
import type { ReactNode } from 'react'
import type { OpName } from '../../../server/panel/contract'
import { Editable } from '../access'

/**
 * A titled card holding one form of a view (a listener's settings, a test box): the operation's
 * Editable guard (read-only with a note for an admin without it), a submit that does not reload the
 * page, and the fields in one Stack. `intro` stands under the title, `after` under the form.
 */
export function FormCard({
  title,
  op,
  testId,
  onSubmit,
  intro,
  after,
  children,
}: {
  title: string
  op: OpName
  testId: string
  onSubmit: () => void
  intro?: ReactNode
  after?: ReactNode
  children: ReactNode
}) {
  return (
    <Card withBorder>
      <Title order={3} size="h4" mb={intro ? 'xs' : 'sm'}>
        {title}
      </Title>
      {intro}
      <Editable op={op} note>
        <form
          onSubmit={(e) => {
            e.preventDefault()
            onSubmit()
          }}
        >
          <Stack gap="sm" data-testid={testId}>
            {children}
          </Stack>
        </form>
      </Editable>
      {after}
    </Card>
  )
}
