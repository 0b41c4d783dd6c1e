import { Card, Group, NumberInput, SimpleGrid, Stack, TagsInput, Text, Button } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useEffect, useState } from 'react'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { Allowed, useMay } from '../../access'
import { useStartup } from '../../startup'

const failed = (title: string) => (e: PanelCallError) => notifications.show({ color: 'red', title, message: e.message })

const list = (items: string[]) => (items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`)

/** What the enforcement rule makes people do, in words. */
export function enforcementInWords(roles: string[], gracePeriodSeconds: number): string {
  if (roles.length === 0) return 'No one is required to use a second factor: each user chooses whether to add one.'
  const days = Math.round(gracePeriodSeconds / 86_400)
  const who = `Users with the ${roles.length === 1 ? 'role' : 'roles'} ${list(roles)}`
  const grace =
    gracePeriodSeconds <= 0
      ? 'they cannot sign in until they have enrolled one'
      : `they have ${days >= 1 ? `${days} day${days === 1 ? '' : 's'}` : 'less than a day'} after their first sign-in under the rule to enrol one, then sign-in is refused until they do`
  return `${who} must use a second factor (an authenticator app or a passkey): ${grace}.`
}

/** Overview card: users with and without a second factor, and the switch requiring one for chosen roles. */
export function SecondFactorSummary() {
  const overview = useOp('twoFactor.overview', {})
  const save = useOpMutation('twoFactor.setEnforcement')
  const mayEnforce = useMay('twoFactor.setEnforcement')
  const [roles, setRoles] = useState<string[]>([])
  const [graceDays, setGraceDays] = useState<number | ''>(7)
  // A value set at start-up is read-only with the badge and the reason, and left out of the save.
  const startup = useStartup()
  const rolesFixed = startup.of('twoFactor.enforcement.roles')
  const graceFixed = startup.of('twoFactor.enforcement.gracePeriod')
  useEffect(() => {
    if (!overview.data) return
    setRoles(overview.data.enforcement.roles)
    setGraceDays(Math.round(overview.data.enforcement.gracePeriod / 86_400))
  }, [overview.data])
  // Shown when two-factor sign-in is on: with it off, there is nothing to count or enforce.
  if (!overview.data?.enabled) return null
  const o = overview.data
  return (
    <Card withBorder data-testid="second-factor-summary">
      <Stack gap="sm">
        <Text fw={500}>Second factors</Text>
        <Text size="sm" data-testid="second-factor-rule">
          {enforcementInWords(o.enforcement.roles, o.enforcement.gracePeriod)}
        </Text>
        <SimpleGrid cols={{ base: 2, md: 4 }}>
          <Text size="sm">With a second factor: {o.withAny}</Text>
          <Text size="sm" data-testid="without-second-factor">
            Without: {o.without}
          </Text>
          <Text size="sm">Authenticator app or mailed codes: {o.withTotp}</Text>
          <Text size="sm">Passkey: {o.withPasskey}</Text>
        </SimpleGrid>
        <Group align="flex-end">
          <TagsInput
            disabled={!mayEnforce}
            {...startup.field('twoFactor.enforcement.roles', { label: 'Require a second factor for roles' })}
            placeholder="e.g. admin"
            value={roles}
            onChange={(v) => rolesFixed || setRoles(v)}
            w={320}
            data-testid="enforcement-roles"
          />
          <NumberInput
            disabled={!mayEnforce}
            {...startup.field('twoFactor.enforcement.gracePeriod', { label: 'Grace period (days)' })}
            min={0}
            value={graceDays}
            onChange={(v) => setGraceDays(typeof v === 'number' ? v : '')}
            w={160}
            data-testid="enforcement-grace"
          />
          <Allowed op="twoFactor.setEnforcement">
            <Button
              loading={save.isPending}
              disabled={Boolean(rolesFixed && graceFixed)}
              data-testid="enforcement-save"
              onClick={() =>
                save.mutate(
                  {
                    ...(rolesFixed ? {} : { roles }),
                    ...(graceDays !== '' && !graceFixed ? { gracePeriod: graceDays * 86_400 } : {}),
                  },
                  {
                    onSuccess: () => notifications.show({ color: 'teal', title: 'Saved', message: 'Enforcement updated' }),
                    onError: failed('Not saved'),
                  },
                )
              }
            >
              Save
            </Button>
          </Allowed>
        </Group>
      </Stack>
    </Card>
  )
}
