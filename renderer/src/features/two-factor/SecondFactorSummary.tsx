import { Card, Group, NumberInput, SimpleGrid, Stack, TagsInput, Text, Button } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useEffect, useState } from 'react'
import { type PanelCallError, useOp, useOpMutation } from '../../api'

const failed = (title: string) => (e: PanelCallError) => notifications.show({ color: 'red', title, message: e.message })

/** Overview card: users with and without a second factor, and the switch requiring one for chosen roles. */
export function SecondFactorSummary() {
  const overview = useOp('twoFactor.overview', {})
  const save = useOpMutation('twoFactor.setEnforcement')
  const [roles, setRoles] = useState<string[]>([])
  const [graceDays, setGraceDays] = useState<number | ''>(7)
  useEffect(() => {
    if (!overview.data) return
    setRoles(overview.data.enforcement.roles)
    setGraceDays(Math.round(overview.data.enforcement.gracePeriod / 86_400))
  }, [overview.data])
  if (!overview.data) return null
  const o = overview.data
  return (
    <Card withBorder data-testid="second-factor-summary">
      <Stack gap="sm">
        <Text fw={500}>Second factors {o.enabled ? '' : '(two-factor is off: twoFactor.enabled)'}</Text>
        <SimpleGrid cols={{ base: 2, md: 4 }}>
          <Text size="sm">With a second factor: {o.withAny}</Text>
          <Text size="sm" data-testid="without-second-factor">
            Without: {o.without}
          </Text>
          <Text size="sm">Authenticator app or mailed codes: {o.withTotp}</Text>
          <Text size="sm">Passkey: {o.withPasskey}</Text>
        </SimpleGrid>
        <Group align="flex-end">
          <TagsInput label="Require a second factor for roles" placeholder="e.g. admin" value={roles} onChange={setRoles} w={320} />
          <NumberInput
            label="Grace period (days)"
            min={0}
            value={graceDays}
            onChange={(v) => setGraceDays(typeof v === 'number' ? v : '')}
            w={160}
          />
          <Button
            loading={save.isPending}
            onClick={() =>
              save.mutate(
                { roles, ...(graceDays !== '' ? { gracePeriod: graceDays * 86_400 } : {}) },
                {
                  onSuccess: () => notifications.show({ color: 'teal', title: 'Saved', message: 'Enforcement updated' }),
                  onError: failed('Not saved'),
                },
              )
            }
          >
            Save
          </Button>
        </Group>
      </Stack>
    </Card>
  )
}
